import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** One upload request as the proxy forwarded it to the API. */
export interface ForwardedUpload {
  fields: Record<string, string>;
  /** Bytes of the file part that reached the server. */
  fileBytes: number;
  cut: boolean;
  /** Milliseconds since the first held auth/data question of the upload worker, when this request came. */
  sinceHeldAuthDataMs: number | null;
}

/**
 * An HTTP forward proxy for one browser context (site, API, files host, service worker and
 * upload worker all go through it). It counts the chunk bytes every upload request delivers to
 * the server, can throttle them (so a test can act mid-chunk), cut one, and refuse everything.
 */
export class CountingProxy {
  readonly uploads: ForwardedUpload[] = [];
  /** What files/upload/status told the client the server holds of an unfinished chunk. */
  readonly storedPartials: { chunkIndex: number; bytes: number }[] = [];
  /** Bytes per second for upload bodies. */
  uploadRate = Infinity;
  down = false;
  /** Status requests wait for open uploads to settle (tests that cut requests need it; it serialises files). */
  settleBeforeStatus = true;
  /** Connections to this host:port are refused (the API unreachable while the site is not). */
  blockedHost: string | null = null;
  /**
   * The upload worker's own "who is this token" question (auth/data) gets a 503 while the page's
   * session check gets its answer, as when the connection fails right after sign-in. The page
   * asks through axios, whose Accept names text/plain; the worker's bare fetch accepts anything.
   * CORS preflights pass.
   */
  refuseWorkerAuthData = false;
  /**
   * The upload worker's auth/data question gets no answer at all (a stalled connection), until
   * the flag is cleared; the browser gives up on it by its own timeout. The page's session check
   * is answered, as for refuseWorkerAuthData.
   */
  holdWorkerAuthData = false;
  /** Worker auth/data requests held and not yet given up by the browser. */
  private held = new Set<http.ServerResponse>();
  private firstHeldAt: number | null = null;
  /** Called as upload bytes pass; return 'cut' to drop this request there. */
  onUploadBytes: (upload: ForwardedUpload) => 'cut' | void = () => undefined;
  private settling = new Set<Promise<void>>();
  /** Upload requests still arriving. */
  private open = new Set<Promise<void>>();
  private server = http.createServer((req, res) => this.handle(req, res));

  async listen(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /** Ends the held auth/data questions with a 503: the worker asks again later. */
  releaseWorkerAuthData(): void {
    this.holdWorkerAuthData = false;
    for (const res of this.held) this.unavailable(res);
    this.held.clear();
  }

  async close(): Promise<void> {
    this.releaseWorkerAuthData();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  totalFileBytes(): number {
    return this.uploads.reduce((sum, u) => sum + u.fileBytes, 0);
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    if (this.down) {
      req.socket.destroy();
      return;
    }
    const target = new URL(req.url ?? '/');
    if (this.blockedHost === target.host) {
      req.socket.destroy();
      return;
    }
    const workerAuthData = target.pathname === '/api/v1/auth/data' && req.method === 'POST' && !String(req.headers.accept).includes('text/plain');
    if (workerAuthData && this.holdWorkerAuthData) {
      this.held.add(res);
      this.firstHeldAt ??= Date.now();
      res.on('close', () => this.held.delete(res));
      req.resume();
      return;
    }
    if (workerAuthData && this.refuseWorkerAuthData) {
      // An answer, not a dropped connection: the service worker would stand in with the page's
      // cached answer for a request that fails, and a first visit has no service worker yet.
      this.unavailable(res);
      return;
    }
    // A status request waits until every upload request still open is over and settled on the
    // server. This proxy reads throttled bodies slowly, so the bytes a closing page had already
    // handed to the network, and the close itself, reach it late; without this wait the test
    // would ask the server about a chunk that is still arriving. (A real server sees them at
    // once.) The status body is small and is forwarded as read.
    let statusBody: Buffer | null = null;
    if (target.pathname === '/api/v1/files/upload/status' && req.method === 'POST') {
      const parts: Buffer[] = [];
      for await (const part of req) parts.push(part as Buffer);
      statusBody = Buffer.concat(parts);
      if (this.settleBeforeStatus) await Promise.all([...this.open, ...this.settling]);
    }
    const upstream = http.request({ host: target.hostname, port: target.port, method: req.method, path: target.pathname + target.search, headers: req.headers, agent: false });
    upstream.on('error', () => req.socket.destroy());
    upstream.on('response', (up) => {
      if (res.headersSent || req.socket.destroyed) {
        up.resume();
        return;
      }
      if (statusBody) this.recordStatus(up);
      res.writeHead(up.statusCode ?? 502, up.headers);
      up.pipe(res);
    });
    if (statusBody) {
      upstream.end(statusBody);
      return;
    }
    if (target.pathname !== '/api/v1/files/upload' || req.method !== 'POST') {
      req.pipe(upstream);
      return;
    }
    this.forwardUpload(req, upstream);
  }

  private unavailable(res: http.ServerResponse): void {
    const origin = res.req.headers.origin ?? '*';
    res.writeHead(503, { 'content-type': 'application/json', 'access-control-allow-origin': origin });
    res.end(JSON.stringify({ success: false, error: { error: 'Service unavailable' } }));
  }

  private recordStatus(answer: http.IncomingMessage): void {
    const parts: Buffer[] = [];
    answer.on('data', (part: Buffer) => parts.push(part));
    answer.on('end', () => {
      try {
        const body = JSON.parse(Buffer.concat(parts).toString()) as { partial?: { chunkIndex: number; bytes: number } | null };
        if (body.partial) this.storedPartials.push(body.partial);
      } catch {
        // Not a status answer (a 5xx page from a server going down): nothing stored to record.
      }
    });
  }

  private forwardUpload(req: http.IncomingMessage, upstream: http.ClientRequest): void {
    const boundary = /boundary=(?:"([^"]+)"|([^;]+))/.exec(req.headers['content-type'] ?? '');
    const trailer = Buffer.byteLength(`\r\n--${boundary?.[1] ?? boundary?.[2] ?? ''}--\r\n`);
    const upload: ForwardedUpload = { fields: {}, fileBytes: 0, cut: false, sinceHeldAuthDataMs: this.firstHeldAt === null ? null : Date.now() - this.firstHeldAt };
    this.uploads.push(upload);
    let head = Buffer.alloc(0);
    let fileStart = -1;
    let forwarded = 0;
    let finished = false;
    const started = Date.now();

    let settle: () => void = () => undefined;
    const settled = new Promise<void>((resolve) => (settle = resolve));
    let over: () => void = () => undefined;
    const arriving = new Promise<void>((resolve) => (over = resolve));
    this.open.add(arriving);
    const closed = () => {
      this.open.delete(arriving);
      over();
    };
    upstream.once('response', closed);
    upstream.once('close', closed);
    const stop = () => {
      if (finished) return;
      finished = true;
      upload.cut = true;
      this.settling.add(settled);
      // The server gets every forwarded byte, then the end of the body, and records what it kept.
      setTimeout(() => upstream.socket?.end(), 300);
      const done = () => {
        // Let the server write down the partial chunk before anyone asks for the status.
        setTimeout(() => {
          this.settling.delete(settled);
          settle();
          req.socket.destroy();
        }, 500);
      };
      upstream.once('response', done);
      upstream.once('close', done);
    };
    req.on('close', () => {
      // Not `req.complete`: a browser that sent the whole body and then closed (a page reloaded
      // while it waited for the answer) leaves `complete` true, yet the pieces this proxy had
      // not read yet, held back by its throttle, go with the socket and 'end' never comes.
      // Those bytes never reached the server, so the request was cut where forwarding stopped.
      if (!finished) stop();
    });
    req.on('data', (data: Buffer) => {
      if (finished) return;
      upstream.write(data);
      forwarded += data.length;
      if (fileStart < 0) {
        head = Buffer.concat([head, data]);
        const text = head.toString('latin1');
        const header = /Content-Disposition: form-data; name="file"[^\r]*\r\n(?:[^\r]+\r\n)*\r\n/i.exec(text);
        if (header) {
          fileStart = header.index + header[0].length;
          for (const m of text.slice(0, header.index).matchAll(/name="([^"]+)"\r\n\r\n([^\r]*)\r\n/g)) upload.fields[m[1]!] = m[2]!;
        }
      }
      if (fileStart >= 0) upload.fileBytes = forwarded - fileStart;
      if (this.onUploadBytes(upload) === 'cut') {
        stop();
        return;
      }
      if (Number.isFinite(this.uploadRate)) {
        const due = started + (forwarded / this.uploadRate) * 1000;
        const wait = due - Date.now();
        if (wait > 5) {
          req.pause();
          setTimeout(() => req.resume(), wait);
        }
      }
    });
    // Node's parser ends a body only once all of it has come (its Content-Length, or a chunked
    // body's last chunk): one that came short ends in 'close', above, never here.
    req.on('end', () => {
      if (finished) return;
      finished = true;
      upload.fileBytes = Math.max(0, forwarded - fileStart - trailer);
      upstream.end();
    });
  }
}

