import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { AddressInfo } from 'node:net';
import { buildSite } from '../../../server/app.ts';
import { LINGER_MS } from '../../../server/http/early-answer.ts';
import { SHARE_FAILED_REDIRECT, SHARE_TARGET_PATH } from '../../../contract/site-routes.ts';
import { createTestApp } from '../../helpers/test-app.ts';
import { standInBuild } from '../../helpers/stand-in-build.ts';
import { apiHostServer, nginxForTests, sameServerBlocks, siteHostServer, startNginx, upstreamDirectives, type Nginx } from '../../helpers/nginx.ts';
import { startTcpProxy, type TcpProxy } from '../../helpers/tcp-proxy.ts';
import { createHttpTestApp, randomBytes, sendMultipart, sha256, type HttpTestApp } from '../../helpers/upload.ts';

const nginxHere = nginxForTests('tests/server/scale/behind-nginx.test.ts');
const CHUNK = 4 * 1024 * 1024;
const README = fs.readFileSync(path.resolve(import.meta.dirname, '../../../README.md'), 'utf8');

/** README's API block as nginx runs it by default: HTTP/1.0 to Stash, a connection per request. */
const withNginxDefaults = (config: string) => config.replace(/proxy_http_version 1\.1;|proxy_set_header Connection "";| keepalive \d+;/g, '');

/**
 * The API behind nginx as README configures it ("Deployment at scale": bodies streamed to Stash,
 * `proxy_request_buffering off`): an upload goes through, and an upload refused before its body
 * has all come reaches the client as Stash's own answer (http/early-answer.ts), where nginx
 * answered 502 Bad Gateway while Stash closed the connection at once.
 */
describe.skipIf(!nginxHere)('the api behind README’s nginx block', () => {
  let t: HttpTestApp;
  const nginxes: Nginx[] = [];
  let relay: TcpProxy | null = null;
  const works: string[] = [];
  afterEach(async () => {
    for (const n of nginxes.splice(0)) await n.stop();
    for (const w of works.splice(0)) fs.rmSync(w, { recursive: true, force: true });
    await relay?.close();
    relay = null;
    await t?.close();
  });

  /** nginx in front of the API, straight or (`counted`) through a relay that counts its connections to it. */
  async function front(config: (port: number, upstream: string) => string, counted = false): Promise<string> {
    const work = fs.mkdtempSync(path.join(os.tmpdir(), 'stash-nginx-'));
    works.push(work);
    if (counted) relay = await startTcpProxy(Number(new URL(t.apiUrl).port));
    const upstream = new URL(counted ? relay!.url : t.apiUrl).host;
    const nginx = await startNginx(work, (port) => config(port, upstream));
    nginxes.push(nginx);
    return nginx.url;
  }

  async function start() {
    t = await createHttpTestApp('sqlite', { chunkSize: CHUNK, env: { TRUST_PROXY: '127.0.0.1' } });
  }

  it('streams a chunked upload to Stash on the connections it keeps', async () => {
    await start();
    const base = await front((port, upstream) => apiHostServer({ port, upstream }), true);
    const user = await t.createUser();
    const data = randomBytes(2 * CHUNK + 1000);
    const common = { token: user.token, uploadId: crypto.randomUUID(), originalname: 'through.bin', totalChunks: 3, fileSize: data.length };
    const opened = relay!.opened();
    let last: Record<string, unknown> = {};
    for (let i = 0; i < 3; i++) {
      const chunk = data.subarray(i * CHUNK, (i + 1) * CHUNK);
      const res = await sendMultipart(`${base}/api/v1/files/upload`, { fields: { ...common, chunkIndex: i, chunkHash: sha256(chunk) }, file: { data: chunk } });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      last = res.body;
    }
    const name = (last.file as { actual_name: string }).actual_name;
    const stored = Buffer.from(await (await fetch(`${t.filesUrl}/${name}`)).arrayBuffer());
    expect(stored.equals(data)).toBe(true);
    // Three uploads on at most one new connection per nginx worker, not one each.
    expect(relay!.opened() - opened).toBeLessThanOrEqual(2);
  });

  it('passes on Stash’s own answer to an upload refused midway, with README’s block and with nginx’s defaults', async () => {
    await start();
    const bases = [await front((port, upstream) => apiHostServer({ port, upstream })), await front((port, upstream) => withNginxDefaults(apiHostServer({ port, upstream })))];
    const user = await t.createUser();
    const chunk = randomBytes(CHUNK);
    const fields = (extra: Record<string, string | number>) => ({ token: user.token, uploadId: crypto.randomUUID(), originalname: 'x.bin', totalChunks: 3, fileSize: 3 * CHUNK, chunkIndex: 0, ...extra });
    const refusals: [string, Record<string, string | number>, number, string][] = [
      ['an expired session', fields({ token: 'not-a-session' }), 401, 'Your session has expired'],
      ['a file over the limit', fields({ fileSize: 10 * 1024 ** 3 }), 413, 'larger than the maximum'],
      ['a chunk index out of range', fields({ chunkIndex: 7 }), 400, 'out of range'],
      ['a wrong checksum', fields({ chunkHash: sha256(randomBytes(8)) }), 422, 'Chunk checksum mismatch'],
    ];
    for (const base of bases) {
      for (const [label, f, status, message] of refusals) {
        const res = await sendMultipart(`${base}/api/v1/files/upload`, { fields: f, file: { data: chunk }, newConnection: true });
        expect(res.status, `${label}: ${JSON.stringify(res.body).slice(0, 200)}`).toBe(status);
        expect(res.body.error, label).toContain(message);
      }
      // A JSON body over the API's 1 MiB limit, refused as it comes.
      const big = await fetch(`${base}/api/v1/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: 'x'.repeat(5 * 1024 * 1024), password: 'y' }) });
      expect(big.status).toBe(413);
      expect(((await big.json()) as { error: string }).error).toBe('The request body is too large.');
    }
  });

  it('answers a client that never stops sending, then closes its connection within the linger', async () => {
    await start();
    // Half open: it goes on sending after the server's end, as a client busy sending does.
    const socket = net.connect({ port: Number(new URL(t.apiUrl).port), host: '127.0.0.1', allowHalfOpen: true });
    await new Promise((resolve) => socket.once('connect', resolve));
    const boundary = 'stashlinger';
    const head = `--${boundary}\r\nContent-Disposition: form-data; name="token"\r\n\r\nnot-a-session\r\n--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="x.bin"\r\n\r\n`;
    socket.write(`POST /api/v1/files/upload HTTP/1.1\r\nHost: api\r\nContent-Type: multipart/form-data; boundary=${boundary}\r\nContent-Length: ${1024 ** 3}\r\n\r\n${head}`);
    let answer = '';
    let closed = false;
    socket.on('data', (d: Buffer) => (answer += d.toString('latin1')));
    // Cut at the end of the linger: a reset is how it ends for a client still sending.
    socket.on('error', () => {});
    socket.on('close', () => (closed = true));
    // A body that keeps coming, far past the answer, as a phone still sending its chunk does.
    const piece = Buffer.alloc(64 * 1024);
    const sending = setInterval(() => {
      if (!socket.destroyed) socket.write(piece);
    }, 20);
    try {
      await expect.poll(() => answer, { timeout: 10_000 }).toContain('Your session has expired');
      expect(answer).toMatch(/^HTTP\/1\.1 401 /);
      expect(answer.toLowerCase()).toContain('connection: close');
      // Still reading (not reset) while the answer travels, then cut: the client cannot hold it.
      const answered = Date.now();
      await expect.poll(() => closed, { timeout: LINGER_MS + 10_000 }).toBe(true);
      expect(Date.now() - answered).toBeGreaterThan(LINGER_MS / 2);
    } finally {
      clearInterval(sending);
      socket.destroy();
    }
  });

  it('is README’s API block', () => {
    const tested = apiHostServer({ port: 1, upstream: 'x:1' });
    const blocks = sameServerBlocks(README, 'api.example.org', tested);
    expect(blocks.documented).toEqual(blocks.tested);
    expect(upstreamDirectives(README, 'stash_api', false)).toEqual(upstreamDirectives(tested, 'stash_api', false));
  });
});

/**
 * The site behind README's nginx block: a share from another app that no service worker took
 * (site.ts) is sent to the app's notice, however large, where nginx refused it (413 past 1 MiB)
 * or Stash answered 404.
 */
describe.skipIf(!nginxHere)('the site behind README’s nginx block', () => {
  it('sends a share no service worker took to the app’s notice, however large', async () => {
    const t = await createTestApp('sqlite');
    const dist = standInBuild();
    const site = await buildSite(t.deps, dist);
    await site.listen({ port: 0, host: '127.0.0.1' });
    const work = fs.mkdtempSync(path.join(os.tmpdir(), 'stash-nginx-'));
    const nginx = await startNginx(work, (port) => siteHostServer({ port, upstream: `127.0.0.1:${(site.server.address() as AddressInfo).port}` }));
    try {
      const boundary = 'stashshare';
      const body = Buffer.concat([
        Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="clip.mp4"\r\nContent-Type: video/mp4\r\n\r\n`),
        randomBytes(16 * 1024 * 1024),
        Buffer.from(`\r\n--${boundary}--\r\n`),
      ]);
      const res = await fetch(`${nginx.url}${SHARE_TARGET_PATH}`, { method: 'POST', headers: { 'content-type': `multipart/form-data; boundary=${boundary}` }, body, redirect: 'manual' });
      expect(res.status, await res.text()).toBe(303);
      expect(res.headers.get('location')).toBe(SHARE_FAILED_REDIRECT);
      expect((await fetch(`${nginx.url}/dashboard`)).status).toBe(200);
    } finally {
      await nginx.stop();
      fs.rmSync(work, { recursive: true, force: true });
      await site.close();
      await t.close();
      fs.rmSync(dist, { recursive: true, force: true });
    }
  });

  it('is README’s site block', () => {
    const blocks = sameServerBlocks(README, 'example.org', siteHostServer({ port: 1, upstream: 'x:1' }));
    expect(blocks.documented).toEqual(blocks.tested);
  });
});
