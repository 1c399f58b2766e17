import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { UrlRefusedError, safeFetch } from '../../../server/lib/safe-fetch.ts';
import { findCaller } from '../../../server/modules/auth/caller.repository.ts';
import { uploadFromUrl } from '../../../server/modules/files/url-upload.service.ts';
import { HttpError } from '../../../server/http/errors.ts';
import { DIALECTS, createTestApp, type TestApp } from '../../helpers/test-app.ts';
import { snapshot } from '../accounts/fixtures.ts';
import { storedBytes } from './raw-http.ts';

/**
 * Issue 8 item 5, URL uploads: one clock from the first byte sent to the last received (headers
 * included), a minimum body rate, and at most a few fetches per user at once.
 */
interface Remote {
  url: string;
  connections: () => number;
  close(): Promise<void>;
}

/** A remote on 127.0.0.1 that writes `steps` one at a time, `everyMs` apart, and never ends on its own. */
async function trickler(steps: (i: number) => string | null, everyMs: number): Promise<Remote> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => undefined);
    socket.once('data', () => {
      let i = 0;
      const timer = setInterval(() => {
        const piece = steps(i++);
        if (piece === null || socket.destroyed) return clearInterval(timer);
        socket.write(piece);
      }, everyMs);
      socket.once('close', () => clearInterval(timer));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/slow.bin`,
    connections: () => [...sockets].filter((s) => !s.destroyed).length,
    close: () =>
      new Promise<void>((r) => {
        for (const s of sockets) s.destroy();
        server.close(() => r());
      }),
  };
}

const headerLines = (i: number) => (i === 0 ? 'HTTP/1.1 200 OK\r\n' : `X-Pad-${i}: a\r\n`);
const bodyBytes = (i: number) => (i === 0 ? 'HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\nContent-Length: 100000\r\n\r\n' : 'x');

const allow = { allowPrivate: true };

describe('safeFetch time bounds', () => {
  const remotes: Remote[] = [];
  afterEach(async () => {
    await Promise.all(remotes.splice(0).map((r) => r.close()));
  });

  it('a server trickling header lines is cut at the total deadline', async () => {
    const remote = await trickler(headerLines, 100);
    remotes.push(remote);
    const started = Date.now();
    await expect(safeFetch(remote.url, { ...allow, deadlineMs: 1500 })).rejects.toThrow(UrlRefusedError);
    expect(Date.now() - started).toBeLessThan(5000);
    await expect.poll(() => remote.connections(), { timeout: 5000 }).toBe(0);
  });

  it('a body trickling a byte at a time is cut at the deadline, or sooner by the minimum rate', async () => {
    const remote = await trickler(bodyBytes, 100);
    remotes.push(remote);
    const fetched = await safeFetch(remote.url, { ...allow, deadlineMs: 1500 });
    const read = (async () => {
      for await (const piece of fetched.stream) void piece;
    })();
    await expect(read).rejects.toThrow('The URL took too long to download.');
    await expect.poll(() => remote.connections(), { timeout: 5000 }).toBe(0);

    const again = await safeFetch(remote.url, { ...allow, minBytesPerSecond: 1024, rateWindowMs: 500 });
    const readAgain = (async () => {
      for await (const piece of again.stream) void piece;
    })();
    await expect(readAgain).rejects.toThrow('The URL sent its data too slowly.');
  });
});

describe.each(DIALECTS)('files/upload-url per-user bounds on %s', (dialect) => {
  let t: TestApp;
  const remotes: Remote[] = [];
  afterEach(async () => {
    await Promise.all(remotes.splice(0).map((r) => r.close()));
    await t?.close();
  });

  it('a slow remote gets a 400 that says why, and nothing is stored', async () => {
    t = await createTestApp(dialect, { URL_UPLOAD_ALLOW_PRIVATE: 'true' });
    const remote = await trickler(bodyBytes, 100);
    remotes.push(remote);
    const user = await t.createUser();
    const caller = (await findCaller(t.deps.db, user.token))!;
    const before = await snapshot(t);
    const err = await uploadFromUrl(t.deps, caller, remote.url, { deadlineMs: 1500 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(HttpError);
    expect(err).toMatchObject({ statusCode: 400, message: 'The URL took too long to download.' });
    expect(await snapshot(t)).toBe(before);
    expect(storedBytes(t.dataDir)).toBe(0);
  });

  it('a fourth URL upload at once gets 429 naming the limit; another user is not held up', async () => {
    t = await createTestApp(dialect, { URL_UPLOAD_ALLOW_PRIVATE: 'true' });
    // Headers at once, then a body that never finishes while the test runs.
    const remote = await trickler((i) => (i === 0 ? 'HTTP/1.1 200 OK\r\nContent-Length: 100000000\r\n\r\n' : 'x'.repeat(2048)), 200);
    remotes.push(remote);
    const user = await t.createUser();
    const other = await t.createUser();
    const held = Array.from({ length: 3 }, () => t.call('/api/v1/files/upload-url', { url: remote.url }, { token: user.token }));
    await expect.poll(() => remote.connections(), { timeout: 10_000 }).toBe(3);
    const fourth = await t.call('/api/v1/files/upload-url', { url: remote.url }, { token: user.token });
    expect(fourth.status).toBe(429);
    expect(fourth.body).toEqual({ success: false, error: 'You already have 3 URL uploads running; at most 3 may run at once. Wait for one to finish.' });
    const theirs = t.call('/api/v1/files/upload-url', { url: remote.url }, { token: other.token });
    await expect.poll(() => remote.connections(), { timeout: 10_000 }).toBe(4);
    // Cut the remote: every held fetch ends with a 4xx and the user's slots are free again.
    await remote.close();
    for (const res of await Promise.all([...held, theirs])) expect(res.status).toBe(400);
    const small = await trickler((i) => (i === 0 ? 'HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 5\r\n\r\nhello' : null), 10);
    remotes.push(small);
    expect((await t.call('/api/v1/files/upload-url', { url: small.url }, { token: user.token })).status).toBe(200);
  });
});
