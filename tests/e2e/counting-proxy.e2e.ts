import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { CountingProxy } from './counting-proxy.ts';

const MiB = 1024 * 1024;

/** An API stand-in that records how each upload body it was sent ended. */
async function recordingApi() {
  const bodies: { bytes: number; ended: 'whole' | 'cut' | null }[] = [];
  const server = http.createServer((req, res) => {
    const body = { bytes: 0, ended: null as 'whole' | 'cut' | null };
    bodies.push(body);
    req.on('data', (piece: Buffer) => (body.bytes += piece.length));
    req.on('end', () => {
      body.ended = 'whole';
      res.end('{"success":true}');
    });
    req.on('close', () => (body.ended ??= 'cut'));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  // A body left hanging (what this test guards against) must not hold the close up.
  const close = () => new Promise((r) => (server.close(r), server.closeAllConnections()));
  return { port: (server.address() as AddressInfo).port, bodies, close };
}

/**
 * The browser suite's proxy (counting-proxy.ts) decides which upload requests the resume tests
 * treat as cut; a request it lets hang instead leaves the server waiting for bytes that never
 * come, and pwa.e2e.ts's 170 MB test then misreads which request resumed which.
 */
describe('the counting proxy', () => {
  it('counts a body the browser sent whole and then closed, while throttled, as cut where forwarding stopped', async () => {
    const api = await recordingApi();
    const proxy = new CountingProxy();
    try {
      const proxyUrl = new URL(await proxy.listen());
      // The body takes the proxy 4 s to pass on at this rate. At 2 MiB/s (0.5 s) a loaded CI
      // machine (2026-12-07, two Chromiums beside it) stalled the proxy past the body's due time,
      // so it never paused, read the last piece before the close, and the body ended whole.
      proxy.uploadRate = MiB / 4;

      const boundary = 'x'.repeat(24);
      const file = Buffer.alloc(MiB, 7);
      const body = Buffer.concat([
        Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="chunkIndex"\r\n\r\n0\r\n`),
        Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="a.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`),
        file,
        Buffer.from(`\r\n--${boundary}--\r\n`),
      ]);
      // What a page reloaded right after its request was handed to the network does: every byte
      // written, then the connection closed without waiting for the answer.
      const socket = net.connect(Number(proxyUrl.port), proxyUrl.hostname);
      await new Promise<void>((resolve) => socket.once('connect', resolve));
      socket.write(
        `POST http://127.0.0.1:${api.port}/api/v1/files/upload HTTP/1.1\r\nHost: 127.0.0.1:${api.port}\r\n` +
          `Content-Type: multipart/form-data; boundary=${boundary}\r\nContent-Length: ${body.length}\r\n\r\n`,
      );
      await new Promise<void>((resolve) => socket.write(body, () => resolve()));
      socket.end();

      // The server hears the body end early, as when the browser's connection drops mid-chunk.
      await expect.poll(() => api.bodies[0]?.ended, { timeout: 10_000 }).toBe('cut');
      const [upload] = proxy.uploads;
      expect(upload?.cut).toBe(true);
      expect(upload?.fields.chunkIndex).toBe('0');
      expect(upload!.fileBytes).toBeLessThan(file.length);
      // No second request stands in for the rest: what the server has is what was forwarded.
      expect(api.bodies).toHaveLength(1);
      expect(api.bodies[0]!.bytes).toBeLessThan(body.length);
    } finally {
      await proxy.close();
      await api.close();
    }
  });
});
