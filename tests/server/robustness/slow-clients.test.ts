import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { DIALECTS, createTestApp, type TestApp } from '../../helpers/test-app.ts';
import { rawRequest } from './raw-http.ts';

/**
 * Issue 8 item 5, request side, on real sockets: a body slower than MIN_BODY_RATE is cut, and
 * one address holding many connections is refused while another address is still served.
 */
async function listen(t: TestApp): Promise<string> {
  await t.api.listen({ port: 0, host: '127.0.0.1' });
  return `http://127.0.0.1:${(t.api.server.address() as AddressInfo).port}`;
}

function openSocket(url: string, localAddress = '127.0.0.1'): Promise<net.Socket> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const s = net.connect({ host: hostname, port: Number(port), localAddress }, () => resolve(s));
    s.on('error', reject);
  });
}

/** What the server writes on a socket until it closes it (or `waitMs`). */
function answerOf(socket: net.Socket, waitMs = 20_000): Promise<{ text: string; closed: boolean }> {
  return new Promise((resolve) => {
    let text = '';
    const timer = setTimeout(() => resolve({ text, closed: false }), waitMs);
    socket.on('data', (d: Buffer) => (text += d.toString()));
    socket.on('close', () => {
      clearTimeout(timer);
      resolve({ text, closed: true });
    });
  });
}

describe.each(DIALECTS)('slow and greedy clients on %s', (dialect) => {
  let t: TestApp;
  const sockets: net.Socket[] = [];
  afterEach(async () => {
    for (const s of sockets.splice(0)) s.destroy();
    t?.api.server.closeAllConnections();
    await t?.close();
  });

  it('cuts a body that trickles in under the minimum rate with 408, and keeps serving', async () => {
    t = await createTestApp(dialect, { MIN_BODY_RATE: '1024' });
    const url = await listen(t);
    const socket = await openSocket(url);
    sockets.push(socket);
    const answer = answerOf(socket);
    socket.write(`POST /api/v1/auth/login HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{"username":`);
    const drip = setInterval(() => socket.writable && socket.write(' '), 500);
    const started = Date.now();
    const { text, closed } = await answer;
    clearInterval(drip);
    expect(closed).toBe(true);
    expect(text).toMatch(/^HTTP\/1\.1 408/);
    expect(text).toContain('The request body arrived too slowly');
    // Cut within the first window or two (10 s each), not after the 2-hour request timeout.
    expect(Date.now() - started).toBeLessThan(25_000);
    expect((await fetch(`${url}/healthz`)).status).toBe(200);
  });

  it('refuses connections past MAX_CONNECTIONS_PER_IP from one address; another address is served', async () => {
    t = await createTestApp(dialect, { MAX_CONNECTIONS_PER_IP: '5' });
    const url = await listen(t);
    for (let i = 0; i < 5; i++) sockets.push(await openSocket(url));
    const extra = await openSocket(url);
    sockets.push(extra);
    const refused = await answerOf(extra, 5000);
    expect(refused.closed).toBe(true);
    expect(refused.text).toMatch(/^HTTP\/1\.1 503/);
    expect(refused.text).toContain('Too many connections from your address');
    // 127.0.0.2 is another client on the loopback network: its requests still get through.
    const other = await openSocket(url, '127.0.0.2');
    sockets.push(other);
    const otherAnswer = answerOf(other, 5000);
    other.write('GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
    expect((await otherAnswer).text).toMatch(/^HTTP\/1\.1 200/);
    // Closing some frees the first address again.
    for (const s of sockets.splice(0, 5)) s.destroy();
    await expect
      .poll(async () => (await rawRequest(url, 'GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n', '', { waitMs: 2000 })).status, { timeout: 5000 })
      .toBe(200);
  });
});
