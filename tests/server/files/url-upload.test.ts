import http from 'node:http';
import type { AddressInfo, LookupFunction } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { UrlRefusedError, safeFetch } from '../../../server/lib/safe-fetch.ts';
import { DIALECTS } from '../../helpers/test-app.ts';
import { createHttpTestApp, randomBytes, sha256, type HttpTestApp } from '../../helpers/upload.ts';

/** A small origin on 127.0.0.1: `/file` serves bytes, `/to?u=` redirects, `/loop/n` redirects n more times. */
function startOrigin(body: Buffer): Promise<{ base: string; port: number; close: () => Promise<void> }> {
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    if (url.pathname === '/photo.bin') {
      res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': body.length });
      res.end(body);
    } else if (url.pathname === '/to') {
      res.writeHead(302, { location: url.searchParams.get('u') ?? '/' });
      res.end();
    } else if (url.pathname.startsWith('/loop/')) {
      const n = Number(url.pathname.split('/')[2]);
      res.writeHead(302, { location: n > 0 ? `/loop/${n - 1}` : '/photo.bin' });
      res.end();
    } else if (url.pathname === '/slow') {
      res.writeHead(200);
      res.write('a');
    } else {
      res.writeHead(404);
      res.end();
    }
  });
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => {
      const port = (server.address() as AddressInfo).port;
      resolve({
        base: `http://127.0.0.1:${port}`,
        port,
        close: () =>
          new Promise((r) => {
            server.closeAllConnections();
            server.close(() => r());
          }),
      });
    });
  });
}

/** Stands in for DNS: every name resolves to the address given (as a public name might, to a private IP). */
const resolveTo =
  (address: string): LookupFunction =>
  (_host, options, cb) => {
    if (options.all) (cb as unknown as (e: null, a: { address: string; family: number }[]) => void)(null, [{ address, family: 4 }]);
    else cb(null, address, 4);
  };

describe('safeFetch (design §7 SSRF rules)', () => {
  let origin: Awaited<ReturnType<typeof startOrigin>>;
  const body = randomBytes(2000);
  beforeEach(async () => {
    origin = await startOrigin(body);
  });
  afterEach(async () => origin.close());

  const refused = async (url: string, options: Parameters<typeof safeFetch>[1]) => {
    const err = await safeFetch(url, options).then(
      () => null,
      (e: unknown) => e,
    );
    expect(err, url).toBeInstanceOf(UrlRefusedError);
    return (err as Error).message;
  };

  it('refuses loopback, private, link-local (cloud metadata) and unspecified addresses', async () => {
    for (const url of ['http://127.0.0.1:1/', 'http://10.0.0.1/', 'http://169.254.169.254/latest/meta-data/', 'http://[::1]/', 'http://0.0.0.0/', 'http://192.168.1.1/']) {
      expect(await refused(url, { allowPrivate: false, timeoutMs: 2000 })).toMatch(/private or reserved/);
    }
  });

  it('checks the address after DNS, so a public-looking name that resolves to a private IP is refused', async () => {
    expect(await refused(`http://files.example.com:${origin.port}/photo.bin`, { allowPrivate: false, lookup: resolveTo('127.0.0.1') })).toMatch(/private/);
  });

  it('re-checks every redirect hop: an allowed first hop may not redirect to a private address', async () => {
    // The test origin itself is on loopback, so it is allowed explicitly; nothing else is.
    const allow = { allowPrivate: false, allowAddresses: ['127.0.0.1'] };
    const ok = await safeFetch(`${origin.base}/photo.bin`, allow);
    ok.stream.resume();
    for (const target of ['http://10.0.0.1/', 'http://169.254.169.254/latest/meta-data/', `http://127.0.0.2:${origin.port}/photo.bin`]) {
      expect(await refused(`${origin.base}/to?u=${encodeURIComponent(target)}`, { ...allow, timeoutMs: 2000 })).toMatch(/private or reserved/);
    }
    // A redirect to a name that resolves privately is caught at that hop as well.
    const viaName = `${origin.base}/to?u=${encodeURIComponent(`http://cdn.example.com:${origin.port}/photo.bin`)}`;
    expect(await refused(viaName, { ...allow, lookup: resolveTo('10.1.2.3') })).toMatch(/private/);
  });

  it('follows at most 5 redirects', async () => {
    const allow = { allowPrivate: true };
    const five = await safeFetch(`${origin.base}/loop/4`, allow);
    five.stream.resume();
    expect(five.finalUrl.pathname).toBe('/photo.bin');
    expect(await refused(`${origin.base}/loop/5`, allow)).toMatch(/more than 5/);
  });

  it('refuses other schemes and gives up on a silent server', async () => {
    for (const url of ['file:///etc/passwd', 'ftp://example.com/x', 'gopher://127.0.0.1/', 'not a url']) {
      await refused(url, { allowPrivate: true });
    }
    const slow = await safeFetch(`${origin.base}/slow`, { allowPrivate: true, timeoutMs: 300 });
    const err = await new Promise<unknown>((resolve) => {
      slow.stream.on('error', resolve);
      slow.stream.on('end', () => resolve(null));
      slow.stream.resume();
    });
    expect(err).toBeInstanceOf(UrlRefusedError);
  });
});

describe.each(DIALECTS)('files/upload-url on %s', (dialect) => {
  let t: HttpTestApp;
  let origin: Awaited<ReturnType<typeof startOrigin>>;
  const body = randomBytes(3000);
  afterEach(async () => {
    await t?.close();
    await origin?.close();
  });

  it('refuses private targets with a 400 when URL_UPLOAD_ALLOW_PRIVATE is off', async () => {
    t = await createHttpTestApp(dialect);
    origin = await startOrigin(body);
    const user = await t.createUser();
    for (const url of [`${origin.base}/photo.bin`, 'http://10.0.0.1/', 'http://169.254.169.254/latest/meta-data/', `${origin.base}/to?u=http://10.0.0.1/`]) {
      const res = await t.call('/api/v1/files/upload-url', { url }, { token: user.token });
      expect(res.status, url).toBe(400);
      expect(String(res.body.error)).toMatch(/private or reserved/);
    }
    expect((await t.call('/api/v1/files/upload-url', { url: 'javascript:alert(1)' }, { token: user.token })).status).toBe(400);
    expect((await t.call('/api/v1/files/uploaded', {}, { token: user.token })).body.totalImages).toBe(0);
  });

  it('fetches from a local server when URL_UPLOAD_ALLOW_PRIVATE=true, with the same naming and size rules', async () => {
    t = await createHttpTestApp(dialect, { env: { URL_UPLOAD_ALLOW_PRIVATE: 'true' } });
    origin = await startOrigin(body);
    const user = await t.createUser();
    const res = await t.call<{ url: string; file: { original_name: string; size: number; actual_name: string } }>(
      '/api/v1/files/upload-url',
      { url: `${origin.base}/to?u=/photo.bin` },
      { token: user.token },
    );
    expect(res.status).toBe(200);
    expect(res.body.file).toMatchObject({ original_name: 'photo.bin', size: 3000 });
    const served = await fetch(`${t.filesUrl}/${res.body.file.actual_name}`);
    expect(sha256(Buffer.from(await served.arrayBuffer()))).toBe(sha256(body));

    // 3000 bytes against a limit of 1 MB passes; a limit below is refused while streaming.
    await t.deps.db.updateTable('settings').set({ value: '0' }).where('key', '=', 'max_file_size').execute();
    t.deps.settings.invalidate();
    const tooBig = await t.call('/api/v1/files/upload-url', { url: `${origin.base}/photo.bin` }, { token: user.token });
    expect(tooBig.status).toBe(413);

    await t.deps.settings.set('allow_uploading', false);
    expect((await t.call('/api/v1/files/upload-url', { url: `${origin.base}/photo.bin` }, { token: user.token })).status).toBe(503);
  });

  it('says in words why a URL could not be fetched, not a system error code', async () => {
    t = await createHttpTestApp(dialect, { env: { URL_UPLOAD_ALLOW_PRIVATE: 'true' } });
    origin = await startOrigin(body);
    const user = await t.createUser();
    // Nothing listens on the origin's port once it is closed.
    const closed = `${origin.base}/photo.bin`;
    await origin.close();
    const refused = await t.call('/api/v1/files/upload-url', { url: closed }, { token: user.token });
    expect(refused.status).toBe(400);
    expect(refused.body.error).toBe("The URL's server refused the connection.");
    expect((await t.call('/api/v1/files/uploaded', {}, { token: user.token })).body.totalImages).toBe(0);
  });
});
