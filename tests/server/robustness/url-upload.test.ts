import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIALECTS, createTestApp, type TestApp, type TestUser } from '../../helpers/test-app.ts';
import { snapshot } from '../accounts/fixtures.ts';
import { storedBytes } from './raw-http.ts';

/**
 * files/upload-url (design §7) with URLs and remote servers that misbehave: the URL is the
 * client's input, so every failure is a 4xx with a message, and nothing is listed or stored.
 */

/** A TCP server that answers each connection with `reply` (raw bytes), then maybe cuts it. */
async function misbehavingServer(reply: (socket: net.Socket, port: number) => void): Promise<{ port: number; close(): Promise<void> }> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => undefined);
    socket.once('data', () => reply(socket, (server.address() as AddressInfo).port));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((r) => {
        for (const s of sockets) s.destroy();
        server.close(() => r());
      }),
  };
}

const BEHAVIOURS: [string, (socket: net.Socket, port: number) => void][] = [
  ['resets the connection at once', (s) => s.resetAndDestroy()],
  ['closes without answering', (s) => s.end()],
  ['answers garbage instead of HTTP', (s) => s.end('NOT HTTP AT ALL\r\n\r\n')],
  ['cuts the body short', (s) => s.end('HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 1000\r\n\r\nonly a little')],
  ['resets midway through the body', (s) => {
    s.write('HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 100000\r\n\r\n' + 'x'.repeat(5000));
    setTimeout(() => s.resetAndDestroy(), 50);
  }],
  ['sends broken chunked encoding', (s) => s.end('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nhello\r\n')],
  ['redirects to file://', (s) => s.end('HTTP/1.1 302 Found\r\nLocation: file:///etc/passwd\r\nContent-Length: 0\r\n\r\n')],
  ['redirects to itself forever', (s, port) => s.end(`HTTP/1.1 302 Found\r\nLocation: http://127.0.0.1:${port}/again\r\nContent-Length: 0\r\n\r\n`)],
  ['redirects to a broken Location', (s) => s.end('HTTP/1.1 302 Found\r\nLocation: http://[::1\r\nContent-Length: 0\r\n\r\n')],
  ['answers 500', (s) => s.end('HTTP/1.1 500 Internal Server Error\r\nContent-Length: 0\r\n\r\n')],
  ['sends a Content-Length that is not a number', (s) => s.end('HTTP/1.1 200 OK\r\nContent-Length: abc\r\n\r\nhello')],
];

describe.each(DIALECTS)('files/upload-url with bad URLs and bad servers on %s (design §7)', (dialect) => {
  let t: TestApp;
  let user: TestUser;
  beforeAll(async () => {
    // Private addresses allowed so the stand-in servers on 127.0.0.1 can be reached.
    t = await createTestApp(dialect, { URL_UPLOAD_ALLOW_PRIVATE: 'true' });
    user = await t.createUser();
  });
  afterAll(async () => t?.close());

  async function expectRefused(url: string, app: TestApp = t, caller: TestUser = user) {
    const before = await snapshot(app);
    const bytes = storedBytes(app.dataDir);
    const res = await app.call('/api/v1/files/upload-url', { url }, { token: caller.token });
    expect(res.status, `${url}: ${JSON.stringify(res.body)}`).toBeGreaterThanOrEqual(400);
    expect(res.status, `${url}: ${JSON.stringify(res.body)}`).toBeLessThan(500);
    expect(res.body.success).toBe(false);
    expect(typeof res.body.error === 'string' && res.body.error.length > 0).toBe(true);
    expect(await snapshot(app)).toBe(before);
    expect(storedBytes(app.dataDir)).toBe(bytes);
  }

  it.each(BEHAVIOURS)('a server that %s', async (_name, behave) => {
    const server = await misbehavingServer(behave);
    try {
      await expectRefused(`http://127.0.0.1:${server.port}/file.txt`);
    } finally {
      await server.close();
    }
  });

  it('a port nobody listens on', async () => {
    const server = await misbehavingServer(() => undefined);
    const { port } = server;
    await server.close();
    await expectRefused(`http://127.0.0.1:${port}/file.txt`);
  });

  it('URLs that are not http(s) or not URLs at all', async () => {
    for (const url of ['file:///etc/passwd', 'javascript:alert(1)', 'data:text/plain,hi', 'gopher://127.0.0.1/', 'ftp://127.0.0.1/', 'not a url', 'http://', 'http://user:pw@127.0.0.1/', 'http://[fe80::1%25eth0]/', `http://${'a'.repeat(300)}.invalid/`]) {
      await expectRefused(url);
    }
  });

  it('private and reserved addresses when they are not allowed', async () => {
    const strict = await createTestApp(dialect);
    try {
      const owner = await strict.createUser();
      for (const url of ['http://127.0.0.1/', 'http://[::1]/', 'http://0x7f000001/', 'http://2130706433/', 'http://169.254.169.254/latest/meta-data/', 'http://[::ffff:127.0.0.1]/', 'http://localhost/', 'http://0/']) {
        await expectRefused(url, strict, owner);
      }
    } finally {
      await strict.close();
    }
  });
});
