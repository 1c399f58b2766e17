/// <reference types="node" />
import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** One upload request as it reached the real server through the proxy. */
export interface SeenUpload {
  fields: Record<string, string>;
  /** File-part bytes forwarded to the server (all of them, or those before a cut). */
  fileBytes: number;
  cut: boolean;
  status: number | null;
}

type Rule =
  | { kind: 'cut'; afterFileBytes: number; thenDown: boolean }
  | { kind: 'stall'; afterFileBytes: number }
  | { kind: 'respond'; status: number; headers: Record<string, string>; body: unknown }
  | { kind: 'lose' };

/**
 * A small HTTP proxy in front of the real API for the queue tests: it sees every upload body
 * (to count the chunk bytes the server received), and can drop a connection partway through
 * a chunk, stall one, answer in the server's place, or refuse connections (server down).
 * A cut request is ended gracefully towards the server, so the server stores exactly the
 * bytes counted here.
 */
export class UploadProxy {
  readonly uploads: SeenUpload[] = [];
  readonly statusCalls: unknown[] = [];
  private rules: Rule[] = [];
  private server: http.Server;
  private stalled: (() => void)[] = [];
  /** Stall rules taken by a request so far, and how many of those releaseStalled() has let go. */
  private stallsTaken = 0;
  private stallsReleased = 0;
  down = false;
  /**
   * Runs after a cut request's body ended and before the client loses its connection: the
   * tests wait there until the server has recorded what it kept (it learns of the cut from the
   * socket, a moment after it has answered).
   */
  settleCut: (seen: SeenUpload) => Promise<void> = async () => undefined;

  constructor(public targetPort: number) {
    this.server = http.createServer((req, res) => this.handle(req, res));
  }

  async listen(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async close(): Promise<void> {
    this.releaseStalled();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  /**
   * The next upload request is dropped after this many bytes of its chunk (Infinity: passes).
   * With thenDown, the proxy refuses every connection from then on, like a server gone away.
   */
  cutNextUpload(afterFileBytes: number, options: { thenDown?: boolean } = {}): void {
    this.rules.push({ kind: 'cut', afterFileBytes, thenDown: options.thenDown ?? false });
  }

  /** The next upload request stops moving after this many bytes, until released or aborted. */
  stallNextUpload(afterFileBytes: number): void {
    this.rules.push({ kind: 'stall', afterFileBytes });
  }

  /** The next upload request is answered here, never reaching the server. */
  answerNextUpload(status: number, body: unknown, headers: Record<string, string> = {}): void {
    this.rules.push({ kind: 'respond', status, headers, body });
  }

  /** The next upload request reaches the server whole, and its answer is lost on the way back. */
  loseNextAnswer(): void {
    this.rules.push({ kind: 'lose' });
  }

  /** Requests stalled now, waiting for releaseStalled(). */
  get stalledRequests(): number {
    return this.stalled.length;
  }

  /**
   * Cuts every request that took a stall rule, also one still on its way to its stall point
   * (on a busy machine a test may release before the request got there: it would hang for good).
   */
  releaseStalled(): void {
    this.stallsReleased = this.stallsTaken;
    for (const release of this.stalled.splice(0)) release();
  }

  /** File bytes the server received across all upload requests. */
  totalFileBytes(): number {
    return this.uploads.reduce((sum, u) => sum + u.fileBytes, 0);
  }

  private handle(req: http.IncomingMessage, res: http.ServerResponse): void {
    if (this.down) {
      req.socket.destroy();
      return;
    }
    const isUpload = req.url === '/api/v1/files/upload';
    const rule = isUpload ? this.rules.shift() : undefined;
    if (rule?.kind === 'respond') {
      req.resume();
      req.on('end', () => {
        this.uploads.push({ fields: {}, fileBytes: 0, cut: false, status: rule.status });
        res.writeHead(rule.status, { 'content-type': 'application/json', ...rule.headers }).end(JSON.stringify(rule.body));
      });
      return;
    }
    const upstream = http.request({ host: '127.0.0.1', port: this.targetPort, method: req.method, path: req.url, headers: req.headers, agent: false });
    upstream.on('error', () => req.socket.destroy());
    const chunks: Buffer[] = [];
    if (!isUpload) {
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        if (req.url === '/api/v1/files/upload/status') this.statusCalls.push(JSON.parse(Buffer.concat(chunks).toString() || 'null'));
      });
      req.pipe(upstream);
      upstream.on('response', (up) => {
        res.writeHead(up.statusCode ?? 502, up.headers);
        up.pipe(res);
      });
      return;
    }

    const boundary = /boundary=(?:"([^"]+)"|([^;]+))/.exec(req.headers['content-type'] ?? '');
    const parser = new MultipartCounter(boundary?.[1] ?? boundary?.[2] ?? '');
    const seen: SeenUpload = { fields: {}, fileBytes: 0, cut: false, status: null };
    this.uploads.push(seen);
    const limit = rule?.kind === 'cut' || rule?.kind === 'stall' ? rule.afterFileBytes : Infinity;
    const stallNumber = rule?.kind === 'stall' ? ++this.stallsTaken : 0;
    let stopped = false;
    req.on('data', (data: Buffer) => {
      if (stopped) return;
      const allowed = parser.bytesAllowed(data, limit);
      upstream.write(data.subarray(0, allowed));
      seen.fields = parser.fields;
      seen.fileBytes = parser.fileBytes;
      if (allowed < data.length || (Number.isFinite(limit) && parser.fileBytes >= limit)) {
        stopped = true;
        seen.cut = true;
        let stopping = false;
        const stop = () => {
          if (stopping) return;
          stopping = true;
          // The server reads what we forwarded, sees the body end early and answers; only then
          // does the client lose its connection, so what the server kept is settled by the
          // time the client asks files/upload/status.
          let dropping = false;
          const dropClient = () => {
            if (dropping) return;
            dropping = true;
            void this.settleCut(seen)
              .catch(() => undefined)
              .finally(() => req.socket.destroy());
          };
          upstream.once('response', dropClient);
          upstream.once('error', dropClient);
          upstream.once('close', dropClient);
          setTimeout(dropClient, 5000).unref();
          // Half-close: the server gets every forwarded byte, then the end of the stream. The
          // pause first is what a real network gives: bytes arrive, the failure is noticed
          // later (the server drops bytes it had not written yet when both come at once).
          setTimeout(() => upstream.socket?.end(), 200);
        };
        if (rule?.kind === 'stall' && stallNumber > this.stallsReleased) {
          req.pause();
          this.stalled.push(stop);
          req.socket.on('close', stop);
        } else {
          if (rule?.kind === 'cut' && rule.thenDown) this.down = true;
          stop();
        }
      }
    });
    req.on('end', () => {
      if (!stopped) upstream.end();
    });
    upstream.on('response', (up) => {
      seen.status = up.statusCode ?? null;
      if (stopped || rule?.kind === 'lose') {
        up.resume();
        if (rule?.kind === 'lose') req.socket.destroy();
        return;
      }
      res.writeHead(up.statusCode ?? 502, up.headers);
      up.pipe(res);
    });
  }
}

/**
 * Follows a multipart body just enough to read the text fields and count the bytes of the part
 * named "file", and tells how much of each piece may pass so that at most `limit` of them do.
 * Keeps the whole body: the tests' chunks are kilobytes.
 */
class MultipartCounter {
  fields: Record<string, string> = {};
  fileBytes = 0;
  private all = Buffer.alloc(0);
  private fileStart = -1;
  private fileEnd = -1;
  private readonly delimiter: Buffer;

  constructor(boundary: string) {
    this.delimiter = Buffer.from(`\r\n--${boundary}`);
  }

  bytesAllowed(data: Buffer, limit: number): number {
    const before = this.all.length;
    this.all = Buffer.concat([this.all, data]);
    if (this.fileStart < 0) {
      const text = this.all.toString('latin1');
      for (const m of text.matchAll(/Content-Disposition: form-data; name="([^"]+)"\r\n\r\n([^\r]*)\r\n/gi)) this.fields[m[1]!] = m[2]!;
      const header = /Content-Disposition: form-data; name="file"[^\r]*\r\n(?:[^\r]+\r\n)*\r\n/i.exec(text);
      if (header) this.fileStart = header.index + header[0].length;
    }
    if (this.fileStart >= 0 && this.fileEnd < 0) {
      const end = this.all.indexOf(this.delimiter, this.fileStart);
      if (end >= 0) this.fileEnd = end;
    }
    let allowed = data.length;
    const wholeFileFits = this.fileEnd >= 0 && this.fileEnd - this.fileStart <= limit;
    if (this.fileStart >= 0 && Number.isFinite(limit) && !wholeFileFits) {
      allowed = Math.max(0, Math.min(data.length, this.fileStart + limit - before));
    }
    const forwarded = before + allowed;
    if (this.fileStart >= 0) {
      const upTo = this.fileEnd >= 0 ? Math.min(forwarded, this.fileEnd) : forwarded;
      this.fileBytes = Math.max(0, upTo - this.fileStart);
    }
    return allowed;
  }
}
