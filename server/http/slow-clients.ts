import type { Socket } from 'node:net';
import type { FastifyInstance } from 'fastify';

/**
 * Issue 8 item 5: a client that holds a connection without sending (slowloris) or trickles a
 * body at a few bytes a second must not keep the server's sockets and memory forever.
 */
export interface SlowClientLimits {
  /** Connections one client address may hold open on one listener; 0 = no cap. */
  maxConnectionsPerIp: number;
  /** The slowest body accepted, in bytes per second averaged over each window. */
  minBodyBytesPerSecond: number;
  /** How often the body rate is checked; the first window is a grace period too. */
  bodyRateWindowMs: number;
}

const TOO_MANY_CONNECTIONS = JSON.stringify({ success: false, error: 'Too many connections from your address. Close some and try again.' });

/**
 * Caps the connections each client address holds on this listener: one client opening
 * thousands of sockets is answered 503 and closed at once, so everyone else stays served.
 * Counted on the socket's own address: behind a trusted proxy every socket comes from the
 * proxy, so main.ts turns the cap off there and the proxy enforces it.
 */
export function capConnectionsPerIp(app: FastifyInstance, max: number): void {
  if (max <= 0) return;
  const open = new Map<string, number>();
  app.server.on('connection', (socket: Socket) => {
    const ip = socket.remoteAddress ?? '';
    const count = (open.get(ip) ?? 0) + 1;
    if (count > max) {
      socket.end(
        `HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json; charset=utf-8\r\nretry-after: 10\r\nconnection: close\r\ncontent-length: ${Buffer.byteLength(TOO_MANY_CONNECTIONS)}\r\n\r\n${TOO_MANY_CONNECTIONS}`,
        () => socket.destroy(),
      );
      return;
    }
    open.set(ip, count);
    socket.once('close', () => {
      const left = (open.get(ip) ?? 1) - 1;
      if (left <= 0) open.delete(ip);
      else open.set(ip, left);
    });
  });
}

/**
 * Cuts a request whose body arrives slower than the minimum rate. The socket's byte counter is
 * read every window (adding a `data` listener would steal the body from the parser); a window
 * in which the client sent less than `min × window` ends the request with 408 and closes the
 * connection. The server's own pauses do not count against the client: a window in which the
 * request's buffer is full (the server is not reading) is skipped.
 */
export function enforceBodyRate(app: FastifyInstance, limits: SlowClientLimits): void {
  if (limits.minBodyBytesPerSecond <= 0) return;
  const need = (limits.minBodyBytesPerSecond * limits.bodyRateWindowMs) / 1000;
  app.addHook('onRequest', async (request, reply) => {
    const raw = request.raw;
    const hasBody = Number(raw.headers['content-length'] ?? 0) > 0 || raw.headers['transfer-encoding'] !== undefined;
    if (!hasBody || raw.complete) return;
    const socket = raw.socket;
    // Only a real connection has a byte counter (Fastify's inject() has none, and nothing to cut).
    if (typeof socket?.bytesRead !== 'number') return;
    let last = socket.bytesRead;
    const timer = setInterval(() => {
      if (raw.complete || socket.destroyed) return clearInterval(timer);
      const now = socket.bytesRead;
      const got = now - last;
      last = now;
      // The server's own backpressure (storage slower than the client) is not the client's fault.
      if (got >= need || raw.readableLength >= raw.readableHighWaterMark) return;
      clearInterval(timer);
      request.log.info('request body slower than the minimum rate: closed');
      if (reply.sent || socket.destroyed) return socket.destroy();
      const body = JSON.stringify({ success: false, error: `The request body arrived too slowly (under ${limits.minBodyBytesPerSecond} bytes per second).` });
      socket.end(`HTTP/1.1 408 Request Timeout\r\ncontent-type: application/json; charset=utf-8\r\nconnection: close\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`, () => socket.destroy());
    }, limits.bodyRateWindowMs);
    timer.unref();
    raw.once('close', () => clearInterval(timer));
  });
}
