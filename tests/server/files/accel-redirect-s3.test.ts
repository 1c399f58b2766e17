import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { GetObjectCommand } from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { describe, expect, it } from 'vitest';
import { createS3Client } from '../../../server/storage/s3.ts';
import { freePort } from '../../helpers/free-port.ts';
import { filesHostServer, nginxForTests, startNginx } from '../../helpers/nginx.ts';
import { createTestBucket, S3_AVAILABLE, s3Endpoint, s3Env, s3Settings, warnS3Skipped } from '../../helpers/s3-server.ts';
import { serverEnv, spawnServer, waitForHealth } from '../../helpers/server-process.ts';
import { createHttpTestApp, randomBytes, sendMultipart } from '../../helpers/upload.ts';

const PREFIX = '/_stash_s3/';
warnS3Skipped();
const nginxHere = nginxForTests('tests/server/files/accel-redirect-s3.test.ts');

/** The store as Stash and nginx reach it: every request passed on to moto as it came, and the signed reads (downloads) recorded. */
async function recordingStore(moto: URL) {
  const reads: { url: string; headers: http.IncomingHttpHeaders }[] = [];
  // The connections the signed reads came on.
  const readers = new Set<unknown>();
  const server = http.createServer((req, res) => {
    if (req.method === 'GET' && req.url?.includes('X-Amz-Signature=')) {
      reads.push({ url: req.url, headers: req.headers });
      readers.add(req.socket);
    }
    const onward = http.request({ host: moto.hostname, port: moto.port, method: req.method, path: req.url, headers: req.headers }, (answer) => {
      // moto closes its connection after each answer (`Connection: close`); the one to nginx is this server's own (hop by hop).
      const { connection: _theirs, 'keep-alive': _theirsToo, ...headers } = answer.headers;
      res.writeHead(answer.statusCode ?? 502, headers);
      answer.pipe(res);
    });
    onward.on('error', () => res.destroy());
    req.pipe(onward);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, reads, readers, close: () => new Promise((r) => server.close(r)) };
}

/**
 * Downloads handed to nginx on S3 (files-host/accel-redirect.ts, README's S3 location): what
 * the operator must get right, and what a real S3 checks. moto does not check presigned
 * signatures, so the request nginx makes is checked here against what S3 verifies: its path,
 * query and Host are those the SDK signs (SigV4, `X-Amz-SignedHeaders=host`).
 */
describe.skipIf(!S3_AVAILABLE || !nginxHere)('a files host handing S3 downloads to nginx', () => {
  it('has nginx ask the store for exactly the read Stash signed, at the signed host, with none of the client’s headers', async () => {
    const moto = new URL(await s3Endpoint());
    const bucket = await createTestBucket(moto.origin);
    const store = await recordingStore(moto);
    const t = await createHttpTestApp('sqlite', { env: { ...s3Env(store.url, bucket.bucket), FILES_ACCEL_REDIRECT: PREFIX } });
    const work = fs.mkdtempSync(path.join(os.tmpdir(), 'stash-nginx-'));
    const upstream = new URL(t.filesUrl).host;
    const nginx = await startNginx(work, (port) => filesHostServer({ port, upstream, prefix: PREFIX, storeOrigin: store.url }));
    try {
      const data = randomBytes(300_000);
      const user = await t.createUser();
      const up = await sendMultipart(`${t.apiUrl}/api/v1/files/upload`, { fields: { token: user.token, originalname: 'signed.bin' }, file: { data } });
      expect(up.status).toBe(200);
      const name = (up.body.file as { actual_name: string }).actual_name;

      const res = await fetch(`${nginx.url}/${name}`, { headers: { range: 'bytes=10-99', cookie: 'session=secret', authorization: 'Bearer secret', 'if-none-match': '"other"' } });
      expect(res.status).toBe(206);
      expect(Buffer.from(await res.arrayBuffer()).equals(data.subarray(10, 100))).toBe(true);

      expect(store.reads).toHaveLength(1);
      const [{ url, headers }] = store.reads as [{ url: string; headers: http.IncomingHttpHeaders }];
      expect(headers.host).toBe(new URL(store.url).host);
      expect(headers.range).toBe('bytes=10-99');
      expect(Object.keys(headers).sort()).toEqual(['host', 'range']);
      // Signed again by the SDK at the moment the request says it was signed: the very same
      // address, byte for byte, or S3 would refuse it (SignatureDoesNotMatch).
      const asked = new URL(url, store.url);
      const stamp = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(asked.searchParams.get('X-Amz-Date') ?? '');
      expect(stamp).not.toBeNull();
      const signingDate = new Date(`${stamp![1]}-${stamp![2]}-${stamp![3]}T${stamp![4]}:${stamp![5]}:${stamp![6]}Z`);
      const key = asked.pathname.slice(`/${bucket.bucket}/`.length);
      const client = createS3Client(s3Settings(store.url, bucket.bucket));
      const again = new URL(await getSignedUrl(client, new GetObjectCommand({ Bucket: bucket.bucket, Key: key }), { expiresIn: 900, signingDate }));
      expect(url).toBe(again.pathname + again.search);

      // Downloads after it reuse nginx's connection to the store (README's `upstream stash_s3 {
      // … keepalive }`): no new handshake with the store per download.
      for (let i = 0; i < 5; i++) {
        const more = await fetch(`${nginx.url}/${name}`, { headers: { range: `bytes=${i}-${i + 999}` } });
        expect(Buffer.from(await more.arrayBuffer()).equals(data.subarray(i, i + 1000))).toBe(true);
      }
      expect(store.reads).toHaveLength(6);
      expect(store.readers.size).toBeLessThanOrEqual(2);
    } finally {
      await nginx.stop();
      fs.rmSync(work, { recursive: true, force: true });
      await t.close();
      await store.close();
      await bucket.drop();
    }
  });

  it('names in its log the origin nginx’s internal location must proxy to', async () => {
    const endpoint = await s3Endpoint();
    const bucket = await createTestBucket(endpoint);
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'stash-accel-'));
    const ports = { site: await freePort(), api: await freePort(), files: await freePort() };
    const env = { ...s3Env(endpoint, bucket.bucket), STASH_ROLES: 'files', FILES_ACCEL_REDIRECT: PREFIX, LOG_LEVEL: 'info' };
    const server = spawnServer(serverEnv(dataDir, ports, env));
    try {
      await waitForHealth(server, [`http://127.0.0.1:${ports.files}`]);
      await expect.poll(() => server.output()).toContain(`its internal location ${PREFIX} must proxy to ${endpoint}/ with Host ${new URL(endpoint).host} (README`);
    } finally {
      await server.stop();
      fs.rmSync(dataDir, { recursive: true, force: true });
      await bucket.drop();
    }
  });
});
