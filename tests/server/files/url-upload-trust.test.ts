import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { UrlRefusedError, safeFetch } from '../../../server/lib/safe-fetch.ts';
import { DIALECTS, createTestApp, type TestApp } from '../../helpers/test-app.ts';
import { snapshot } from '../accounts/fixtures.ts';
import { storedBytes } from '../robustness/raw-http.ts';

/**
 * files/upload-url (design §7) against remotes that try to keep the server busy or reach past
 * its bounds once the answer has gone out.
 */
interface Remote {
  base: string;
  /** Connections the remote still has open. */
  open: () => number;
  close(): Promise<void>;
}

/** A remote on 127.0.0.1 that answers each request line by `answer(path, socket)`. */
async function remote(answer: (path: string, socket: net.Socket) => void): Promise<Remote> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => undefined);
    socket.once('data', (head: Buffer) => answer(/^GET (\S+)/.exec(head.toString('latin1'))?.[1] ?? '/', socket));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    open: () => [...sockets].filter((s) => !s.destroyed).length,
    close: () =>
      new Promise<void>((r) => {
        for (const s of sockets) s.destroy();
        server.close(() => r());
      }),
  };
}

/** Writes `head`, then a chunked body that never ends: 32 KiB every 10 ms for as long as anyone reads. */
function endless(socket: net.Socket, head: string): void {
  socket.write(`${head}Transfer-Encoding: chunked\r\n\r\n`);
  const piece = `8000\r\n${'x'.repeat(0x8000)}\r\n`;
  const timer = setInterval(() => {
    if (socket.destroyed) clearInterval(timer);
    else socket.write(piece);
  }, 10);
  socket.once('close', () => clearInterval(timer));
}

const small = (socket: net.Socket) => socket.end('HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 5\r\n\r\nhello');

describe.each(DIALECTS)('files/upload-url leaves no fetch running on %s (design §7)', (dialect) => {
  let t: TestApp;
  const remotes: Remote[] = [];
  afterEach(async () => {
    await Promise.all(remotes.splice(0).map((r) => r.close()));
    await t?.close();
  });

  it('a redirect or error answer with an endless body is not read on after the answer goes out', async () => {
    t = await createTestApp(dialect, { URL_UPLOAD_ALLOW_PRIVATE: 'true' });
    const user = await t.createUser();
    const origin = await remote((path, socket) => {
      if (path === '/redirect') endless(socket, 'HTTP/1.1 302 Found\r\nLocation: /file.txt\r\n');
      else if (path === '/broken') endless(socket, 'HTTP/1.1 500 Internal Server Error\r\n');
      else small(socket);
    });
    remotes.push(origin);

    const redirected = await t.call('/api/v1/files/upload-url', { url: `${origin.base}/redirect` }, { token: user.token });
    expect(redirected.status).toBe(200);
    const broken = await t.call('/api/v1/files/upload-url', { url: `${origin.base}/broken` }, { token: user.token });
    expect(broken.status).toBe(400);
    expect(broken.body.error).toBe('The URL answered with HTTP 500.');
    // Each answer is final: a body still drained behind it would hold a socket, outside the
    // per-user count of max_url_fetches and past any deadline (issue 8 item 5).
    await expect.poll(() => origin.open(), { timeout: 3000 }).toBe(0);
  });

  it('an endless body without a length is cut at max_file_size with 413, nothing kept, the remote let go', async () => {
    t = await createTestApp(dialect, { URL_UPLOAD_ALLOW_PRIVATE: 'true' });
    const user = await t.createUser();
    const origin = await remote((_path, socket) => endless(socket, 'HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n'));
    remotes.push(origin);
    await t.deps.db.updateTable('settings').set({ value: '1' }).where('key', '=', 'max_file_size').execute();
    t.deps.settings.invalidate();
    const before = await snapshot(t);
    const res = await t.call('/api/v1/files/upload-url', { url: `${origin.base}/huge.txt` }, { token: user.token });
    expect(res.status).toBe(413);
    expect(await snapshot(t)).toBe(before);
    expect(storedBytes(t.dataDir)).toBe(0);
    await expect.poll(() => origin.open(), { timeout: 3000 }).toBe(0);
  });

  it('a type the site does not allow is refused with 415 and leaves no row, no bytes and no fetch slot behind', async () => {
    t = await createTestApp(dialect, { URL_UPLOAD_ALLOW_PRIVATE: 'true' });
    const user = await t.createUser();
    const html = '<!doctype html><html><body><script>alert(1)</script></body></html>';
    const origin = await remote((_path, socket) => socket.end(`HTTP/1.1 200 OK\r\nContent-Type: image/png\r\nContent-Length: ${html.length}\r\n\r\n${html}`));
    remotes.push(origin);
    await t.deps.db.deleteFrom('mime_types').where('mime', '=', 'text/plain').execute();
    const before = await snapshot(t);
    // More than max_url_fetches (3) in a row: a slot kept by a refusal would turn the fourth into 429.
    for (let i = 0; i < 4; i++) {
      const res = await t.call('/api/v1/files/upload-url', { url: `${origin.base}/page.png` }, { token: user.token });
      expect(res.status).toBe(415);
    }
    expect(await snapshot(t)).toBe(before);
    expect(storedBytes(t.dataDir)).toBe(0);
  });
});

describe('safeFetch and IPv6 forms of IPv4 addresses (design §7)', () => {
  it('refuses IPv4-compatible IPv6 (::a.b.c.d, deprecated by RFC 4291) as it refuses the IPv4 address inside', async () => {
    // ipaddr.js calls ::/96 "unicast"; a host with its sit tunnel up holds ::127.0.0.1 itself.
    for (const url of ['http://[::127.0.0.1]/', 'http://[::169.254.169.254]/latest/meta-data/', 'http://[::10.0.0.1]/']) {
      const err = await safeFetch(url, { allowPrivate: false, timeoutMs: 1000 }).then(
        (ok) => ok.stream.destroy(),
        (e: unknown) => e,
      );
      expect(err, url).toBeInstanceOf(UrlRefusedError);
      expect((err as Error).message, url).toMatch(/private or reserved/);
    }
  });
});
