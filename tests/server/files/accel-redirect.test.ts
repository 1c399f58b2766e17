import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Dialect } from '../../../server/db/index.ts';
import { DIALECTS } from '../../helpers/test-app.ts';
import { createHttpTestApp, randomBytes, sendMultipart, SERVING_CHUNK_SIZE, type HttpTestApp } from '../../helpers/upload.ts';
import { directiveLines, filesHostServer, nginxForTests, startNginx, upstreamDirectives, type Nginx } from '../../helpers/nginx.ts';
import { createTestBucket, S3_AVAILABLE, s3Endpoint, s3Env, warnS3Skipped } from '../../helpers/s3-server.ts';
import { startTcpProxy, type TcpProxy } from '../../helpers/tcp-proxy.ts';

type Store = 'local' | 's3';
const PREFIXES: Record<Store, string> = { local: '/_stash_files/', s3: '/_stash_s3/' };
// Set by the server or the connection, not by the files host; the count left moves with each request.
const APART = new Set(['date', 'connection', 'keep-alive', 'transfer-encoding', 'server', 'x-ratelimit-remaining', 'x-ratelimit-reset']);

const nginxHere = nginxForTests('tests/server/files/accel-redirect.test.ts');

// Local disk on every database; the S3 store on one (what differs there is the store, not the database).
const VARIANTS: [Dialect, Store][] = [...DIALECTS.map((d): [Dialect, Store] => [d, 'local']), ...(S3_AVAILABLE ? [['sqlite', 's3'] as [Dialect, Store]] : [])];
warnS3Skipped();

/**
 * Issue 9, downloads at nginx's speed (files-host/accel-redirect.ts): with FILES_ACCEL_REDIRECT
 * set and nginx in front as README configures it, a download reaches the client from nginx —
 * its `sendfile` on local disk, its fetch of a signed read on S3 — with the status, headers and
 * bytes Stash itself sends, whichever of Stash's paths answered (Fastify's route for a name not
 * yet cached, the fast path after), and Stash still decides what may be had: deleted files,
 * 304s, 416s, ranges, nginx's internal location.
 */
describe.skipIf(!nginxHere).each(VARIANTS)('downloads handed to nginx on %s, files on %s', (dialect, store) => {
  const PREFIX = PREFIXES[store];
  let t: HttpTestApp;
  let nginx: Nginx | null = null;
  let work = '';
  let bucket: Awaited<ReturnType<typeof createTestBucket>> | null = null;
  let relay: TcpProxy | null = null;
  afterEach(async () => {
    await nginx?.stop();
    nginx = null;
    if (work) fs.rmSync(work, { recursive: true, force: true });
    await t?.close();
    await bucket?.drop();
    bucket = null;
    await relay?.close();
    relay = null;
  });

  /**
   * `servers`: nginx's server block in front of the files host (README's by default); `relayed`:
   * nginx reaches the files host through a relay that counts its connections.
   */
  async function start(env: Record<string, string> = {}, servers?: (port: number, upstream: string) => string, relayed = false) {
    // The store named, whatever TEST_STORAGE says: nginx reads local files itself, or fetches from S3.
    let storeEnv: Record<string, string> = { STORAGE_DRIVER: 'local' };
    if (store === 's3') {
      const endpoint = await s3Endpoint();
      bucket = await createTestBucket(endpoint);
      storeEnv = s3Env(endpoint, bucket.bucket);
    }
    t = await createHttpTestApp(dialect, { chunkSize: SERVING_CHUNK_SIZE, env: { ...storeEnv, FILES_ACCEL_REDIRECT: PREFIX, ...env } });
    work = fs.mkdtempSync(path.join(os.tmpdir(), 'stash-nginx-'));
    relay = relayed ? await startTcpProxy(Number(new URL(t.filesUrl).port)) : null;
    const upstream = new URL(relay?.url ?? t.filesUrl).host;
    const where = storeEnv.S3_ENDPOINT ? { storeOrigin: storeEnv.S3_ENDPOINT } : { filesDir: path.join(t.dataDir, 'storage', 'files') };
    const readme = (port: number) => filesHostServer({ port, upstream, prefix: PREFIX, ...where });
    nginx = await startNginx(work, servers ? (port) => servers(port, upstream) : readme);
  }

  /** Where nginx is pointed for a stored object: its path on disk, or its signed read's path on S3. */
  function storedAt(key: string): string {
    return store === 'local' ? `${PREFIX}${key.slice(0, 2)}/${key}` : `${PREFIX}${bucket!.bucket}/files/${key}`;
  }

  async function upload(data: Buffer, originalname: string): Promise<{ name: string; token: string }> {
    const user = await t.createUser();
    const res = await sendMultipart(`${t.apiUrl}/api/v1/files/upload`, { fields: { token: user.token, originalname }, file: { data } });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return { name: (res.body.file as { actual_name: string }).actual_name, token: user.token };
  }

  async function get(base: string, name: string, method: 'GET' | 'HEAD', headers: Record<string, string>) {
    const res = await fetch(`${base}/${name}`, { method, headers });
    const body = Buffer.from(await res.arrayBuffer());
    const seen: Record<string, string> = {};
    res.headers.forEach((v, k) => {
      if (!APART.has(k)) seen[k] = v;
    });
    return { status: res.status, headers: seen, body, all: res.headers };
  }

  const cases = (etag: string, lastModified: string): [string, 'GET' | 'HEAD', Record<string, string>, number][] => [
    ['whole', 'GET', {}, 200],
    ['head', 'HEAD', {}, 200],
    ['etag', 'GET', { 'if-none-match': etag }, 304],
    ['date', 'GET', { 'if-modified-since': lastModified }, 304],
    ['other etag', 'GET', { 'if-none-match': '"other"' }, 200],
    ['range', 'GET', { range: 'bytes=100-199' }, 206],
    ['suffix range', 'GET', { range: 'bytes=-1000' }, 206],
    ['open range', 'GET', { range: 'bytes=70000-' }, 206],
    ['two ranges', 'GET', { range: 'bytes=0-9,20-29' }, 200],
    // Ranges Stash does not read as one (so sends the whole file), where nginx would read them its own way.
    ['malformed range', 'GET', { range: 'bytes=abc' }, 200],
    ['reversed range', 'GET', { range: 'bytes=9-2' }, 200],
    ['spaced range', 'GET', { range: 'bytes= 0-9' }, 200],
    ['other unit', 'GET', { range: 'items=0-9' }, 200],
    ['if-range matching', 'GET', { range: 'bytes=0-9', 'if-range': etag }, 206],
    ['if-range stale', 'GET', { range: 'bytes=0-9', 'if-range': '"old"' }, 200],
    ['past the end', 'GET', { range: 'bytes=900000-' }, 416],
  ];

  async function sameThroughNginx(name: string) {
    const first = await fetch(`${t.filesUrl}/${name}`, { method: 'HEAD' });
    const etag = first.headers.get('etag') ?? '';
    const lastModified = first.headers.get('last-modified') ?? '';
    for (const [label, method, headers, status] of cases(etag, lastModified)) {
      const direct = await get(t.filesUrl, name, method, headers);
      const proxied = await get(nginx!.url, name, method, headers);
      expect(direct.status, label).toBe(status);
      expect(proxied.status, label).toBe(status);
      // nginx says Accept-Ranges on whole files only, Stash on every answer (design §8): on a part
      // nginx sent, the one header that differs.
      if (status === 206) for (const answer of [direct, proxied]) delete answer.headers['accept-ranges'];
      expect(proxied.headers, label).toEqual(direct.headers);
      expect(proxied.body.equals(direct.body), label).toBe(true);
    }
  }

  /** Asked as nginx asks, the files host answers with the headers and where the bytes are, no body. */
  async function expectHandedOver(name: string) {
    const handed = await get(t.filesUrl, name, 'GET', { 'x-sendfile-type': 'X-Accel-Redirect' });
    expect(handed.status).toBe(200);
    expect(handed.body.length).toBe(0);
    const key = (handed.headers.etag ?? '').replaceAll('"', '');
    const target = handed.headers['x-accel-redirect'] ?? '';
    if (store === 'local') expect(target).toBe(storedAt(key));
    else {
      // A presigned GET, good for a while, signed for nothing but the store's host.
      const signed = new URL(target, 'http://nginx');
      expect(signed.pathname).toBe(storedAt(key));
      expect(signed.searchParams.get('X-Amz-Signature')).toMatch(/^[0-9a-f]{64}$/);
      expect(signed.searchParams.get('X-Amz-Expires')).toBe('900');
      expect(signed.searchParams.get('X-Amz-SignedHeaders')).toBe('host');
    }
    expect(handed.headers['content-security-policy']).toContain('sandbox');
    return handed;
  }

  it('sends what Stash sends, from nginx, on both of Stash’s paths', async () => {
    await start();
    const data = randomBytes(300_000);
    const { name } = await upload(data, 'naïve "quoted".bin');
    // Through Fastify's route (the name is not cached yet), then the fast path (files-host.ts answerFast).
    await expectHandedOver(name);
    await expectHandedOver(name);
    // The range as Stash read it, for the store to be asked for (nginx cuts a file on disk itself).
    const ranged = await get(t.filesUrl, name, 'GET', { 'x-sendfile-type': 'X-Accel-Redirect', range: 'bytes=-1000' });
    expect(ranged.headers['x-stash-range']).toBe(store === 's3' ? 'bytes=299000-299999' : undefined);
    const whole = await get(nginx!.url, name, 'GET', {});
    expect(whole.body.equals(data)).toBe(true);
    expect(whole.all.get('server')).toMatch(/^nginx/);
    expect(whole.headers['x-accel-redirect']).toBeUndefined();
    await sameThroughNginx(name);
    const range = await get(nginx!.url, name, 'GET', { range: 'bytes=100-199' });
    expect(range.body.equals(data.subarray(100, 200))).toBe(true);
    expect(range.headers['content-range']).toBe('bytes 100-199/300000');
  });

  it('sends what Stash sends through Fastify’s route, behind a trusted proxy with rate limits on', async () => {
    // An address behind a trusted proxy is Fastify's to work out: no request takes the fast path.
    await start({ RATE_LIMITS: 'on', FILES_RATE_LIMIT: '1000', TRUST_PROXY: '127.0.0.1' });
    const data = randomBytes(200_000);
    const { name } = await upload(data, 'limited.bin');
    await expectHandedOver(name);
    await sameThroughNginx(name);
    const proxied = await get(nginx!.url, name, 'GET', {});
    expect(proxied.body.equals(data)).toBe(true);
    expect(proxied.headers['x-ratelimit-limit']).toBe('1000');
    expect(Number(proxied.all.get('x-ratelimit-remaining'))).toBeLessThan(1000);
  });

  it('keeps nginx’s connections to the files host open from one download to the next', async () => {
    await start({}, undefined, true);
    const small = randomBytes(4096);
    const large = randomBytes(300_000);
    const { name: smallName } = await upload(small, 'small.bin');
    const { name: largeName } = await upload(large, 'large.bin');
    for (let i = 0; i < 6; i++) {
      expect((await get(nginx!.url, smallName, 'GET', {})).body.equals(small)).toBe(true);
      expect((await get(nginx!.url, largeName, 'GET', { range: 'bytes=0-99' })).body.equals(large.subarray(0, 100))).toBe(true);
    }
    // Twelve downloads, one after the other: without README's `keepalive`, twelve connections,
    // each opened and closed by nginx (one per worker may be opened here).
    expect(relay!.opened()).toBeLessThanOrEqual(2);
  });

  it('serves small files itself, refuses nginx’s internal location, and a deleted file is gone', async () => {
    await start();
    const small = randomBytes(4096);
    const { name: smallName } = await upload(small, 'small.bin');
    const kept = await get(t.filesUrl, smallName, 'GET', { 'x-sendfile-type': 'X-Accel-Redirect' });
    expect(kept.headers['x-accel-redirect']).toBeUndefined();
    expect(kept.body.equals(small)).toBe(true);

    const data = randomBytes(100_000);
    const { name, token } = await upload(data, 'doomed.bin');
    expect((await get(nginx!.url, name, 'GET', {})).body.equals(data)).toBe(true);
    const key = ((await get(t.filesUrl, name, 'HEAD', {})).headers.etag ?? '').replaceAll('"', '');
    // The bytes are there, but only Stash's answers may point nginx at them.
    const internal = await get(nginx!.url, storedAt(key).slice(1), 'GET', {});
    expect(internal.status).toBe(404);
    expect(internal.body.includes(data.subarray(0, 64))).toBe(false);

    expect((await t.call('/api/v1/files/delete', { filePath: name }, { token })).status).toBe(200);
    const gone = await get(nginx!.url, name, 'GET', {});
    expect(gone.status).toBe(404);
    expect(gone.body.toString()).toContain('Not found.');
  });

  it('says what is missing when nginx has no internal location and passes a download back', async () => {
    // The header set, the location forgotten: nginx matches the hand-over against `location /`.
    await start({}, (port, upstream) => `server { listen 127.0.0.1:${port}; location / { proxy_pass http://${upstream}; proxy_set_header X-Sendfile-Type X-Accel-Redirect; } }`);
    const data = randomBytes(100_000);
    const { name } = await upload(data, 'big.bin');
    const res = await get(nginx!.url, name, 'GET', {});
    expect(res.status).toBe(502);
    expect(JSON.parse(res.body.toString()).error).toBe(
      `The proxy in front passed a download back instead of sending it: it has no internal location for FILES_ACCEL_REDIRECT (${PREFIX}). See README, "Deployment at scale".`,
    );
    // Files kept in memory are still served, and the same path asked by anyone but the proxy is unknown.
    const small = randomBytes(1000);
    const { name: smallName } = await upload(small, 'small.bin');
    expect((await get(nginx!.url, smallName, 'GET', {})).body.equals(small)).toBe(true);
    expect((await get(t.filesUrl, `${PREFIX.slice(1)}ab/abcdefgh`, 'GET', {})).status).toBe(404);
  });
});

/** The directives of the block `opening` starts (the first one at or after `from`). */
function block(config: string, opening: string, from = ''): string[] {
  const lines = directiveLines(config);
  const start = from ? lines.findIndex((line) => line.includes(from)) : 0;
  expect(start, from).toBeGreaterThan(-1);
  const first = lines.indexOf(opening, start);
  expect(first, opening).toBeGreaterThan(-1);
  return lines.slice(first + 1, lines.indexOf('}', first));
}

describe('README\u2019s nginx configuration', () => {
  const readme = fs.readFileSync(path.resolve(import.meta.dirname, '../../../README.md'), 'utf8');
  const upstreamHost = '10.0.0.13:8082';
  const tested = {
    local: filesHostServer({ port: 1, upstream: upstreamHost, prefix: PREFIXES.local, filesDir: '/var/lib/stash/storage/files' }),
    s3: filesHostServer({ port: 1, upstream: upstreamHost, prefix: PREFIXES.s3, storeOrigin: 'https://stash.s3.eu-west-1.amazonaws.com' }),
  };

  it('is the one the tests run, for both stores', () => {
    for (const store of ['local', 's3'] as const) {
      const opening = `location ${PREFIXES[store]} {`;
      expect(block(readme, opening), store).toEqual(block(tested[store], opening));
    }
    expect(block(readme, 'location / {', 'server_name files.example.org')).toEqual(block(tested.local, 'location / {'));
    expect(upstreamDirectives(readme, 'stash_files', false)).toEqual(upstreamDirectives(tested.local, 'stash_files', false));
    expect(upstreamDirectives(readme, 'stash_s3')).toEqual(upstreamDirectives(tested.s3, 'stash_s3'));
  });

  it('keeps connections open to every upstream, and every location that proxies speaks HTTP/1.1 without closing them', () => {
    for (const name of ['stash_site', 'stash_api', 'stash_files', 'stash_s3']) expect(upstreamDirectives(readme, name), name).toContainEqual(expect.stringMatching(/^keepalive \d+$/));
    const lines = directiveLines(readme.slice(readme.indexOf('```nginx'), readme.indexOf('```', readme.indexOf('```nginx') + 8)));
    const locations = lines.flatMap((line, i) => (line.startsWith('location ') ? [lines.slice(i + 1, lines.indexOf('}', i))] : []));
    const proxying = locations.filter((directives) => directives.some((d) => d.startsWith('proxy_pass ')));
    expect(proxying).toHaveLength(5);
    for (const directives of proxying) {
      expect(directives, directives[0]).toContain('proxy_http_version 1.1;');
      expect(directives, directives[0]).toContain('proxy_set_header Connection "";');
    }
  });
});
