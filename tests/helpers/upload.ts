import crypto from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import type { Dialect } from '../../server/db/index.ts';
import type { DepsOverrides } from '../../server/deps.ts';
import { createTestApp, type TestApp } from './test-app.ts';

export interface HttpTestApp extends TestApp {
  apiUrl: string;
  filesUrl: string;
}

async function listen(app: FastifyInstance): Promise<string> {
  await app.listen({ port: 0, host: '127.0.0.1' });
  return `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
}

/**
 * A chunk size for tests of what comes after an upload (serving, previews), where the default
 * 1 KiB chunks only cost time: the store writes a file a chunk's piece at a time, so on S3 a
 * 200 KB file was 200 requests to put and some 400 to join (20 s a file on moto). 64 KiB still
 * stores most files in several pieces.
 */
export const SERVING_CHUNK_SIZE = 64 * 1024;

/** A test app served over real HTTP (uploads must stream), with a small chunk size. */
export async function createHttpTestApp(
  dialect: Dialect,
  options: { chunkSize?: number; env?: Record<string, string>; leaseMs?: number; storage?: DepsOverrides['storage']; s3PieceSize?: number; s3SilenceMs?: number; previewLimits?: DepsOverrides['previewLimits'] } = {},
): Promise<HttpTestApp> {
  const t = await createTestApp(dialect, options.env ?? {}, {
    uploadChunkSize: options.chunkSize ?? 1024,
    ...(options.leaseMs ? { uploadLeaseMs: options.leaseMs } : {}),
    ...(options.s3PieceSize ? { s3PieceSize: options.s3PieceSize } : {}),
    ...(options.s3SilenceMs ? { s3SilenceMs: options.s3SilenceMs } : {}),
    ...(options.storage ? { storage: options.storage } : {}),
    ...(options.previewLimits ? { previewLimits: options.previewLimits } : {}),
  });
  const apiUrl = await listen(t.api);
  const filesUrl = await listen(t.files);
  return {
    ...t,
    apiUrl,
    filesUrl,
    async close() {
      // A test that stops reading a response must not keep the server from closing.
      t.api.server.closeAllConnections();
      t.files.server.closeAllConnections();
      await t.close();
    },
  };
}

export type FileBody = Buffer | (() => AsyncIterable<Buffer>);

export interface MultipartRequest {
  fields?: Record<string, string | number>;
  file?: { data: FileBody; filename?: string; name?: string };
  /** Send the file part before the text fields. */
  fileFirst?: boolean;
  /** Text fields sent after the file part, whichever side `fields` go. */
  fieldsAfter?: Record<string, string | number>;
  bearer?: string;
  /** Cut the connection after this many bytes of the file part were sent. */
  abortAfter?: number;
  /**
   * Resolves once the server has taken what was sent before the cut (a test polls the store).
   * Without it the cut comes 150 ms after the last byte: enough where the server is streaming a
   * large body anyway, not for a few hundred bytes on a loaded machine, where the request may not
   * have reached its handler yet and the cut loses what sat unread in its buffer.
   */
  beforeCut?: () => Promise<unknown>;
  /**
   * Sent on a connection of its own rather than one kept from an earlier request: after an
   * upload refused midway nginx answers "keep-alive" but closes, and unlike a browser, Node's
   * client does not send again a request whose kept connection turned out closed.
   */
  newConnection?: boolean;
}

export interface HttpAnswer {
  status: number;
  body: Record<string, unknown>;
}

/**
 * A multipart POST written by hand over node:http, so a test can stream a body generated on
 * the fly and cut it off midway, which FormData cannot do.
 */
export function sendMultipart(url: string, request: MultipartRequest): Promise<HttpAnswer> {
  const boundary = `----stash${crypto.randomBytes(8).toString('hex')}`;
  const partsOf = (fields: Record<string, string | number> = {}) =>
    Object.entries(fields).map(([k, v]) => Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${k}"\r\n\r\n${String(v)}\r\n`));
  const fieldParts = partsOf(request.fields);
  const afterParts = partsOf(request.fieldsAfter);
  const file = request.file;
  const fileHead = file
    ? Buffer.from(
        `--${boundary}\r\nContent-Disposition: form-data; name="${file.name ?? 'file'}"; filename="${file.filename ?? 'blob'}"\r\nContent-Type: application/octet-stream\r\n\r\n`,
      )
    : null;
  const end = Buffer.from(`--${boundary}--\r\n`);

  return new Promise((resolve, reject) => {
    const req = http.request(url, {
      method: 'POST',
      ...(request.newConnection ? { agent: false } : {}),
      headers: {
        'content-type': `multipart/form-data; boundary=${boundary}`,
        ...(request.bearer ? { authorization: `Bearer ${request.bearer}` } : {}),
      },
    });
    let settled = false;
    req.on('response', (res) => {
      const parts: Buffer[] = [];
      res.on('data', (d: Buffer) => parts.push(d));
      res.on('end', () => {
        settled = true;
        const text = Buffer.concat(parts).toString();
        let body: Record<string, unknown>;
        try {
          body = JSON.parse(text) as Record<string, unknown>;
        } catch {
          body = { raw: text };
        }
        resolve({ status: res.statusCode ?? 0, body });
      });
    });
    req.on('error', (err) => {
      if (!settled) reject(err);
    });

    const write = (buf: Buffer) =>
      new Promise<void>((ok) => {
        if (!req.write(buf)) req.once('drain', ok);
        else ok();
      });
    void (async () => {
      try {
        if (!request.fileFirst) for (const p of fieldParts) await write(p);
        if (file && fileHead) {
          await write(fileHead);
          let sent = 0;
          const source: AsyncIterable<Buffer> | Iterable<Buffer> = Buffer.isBuffer(file.data) ? [file.data] : file.data();
          for await (const piece of source) {
            if (request.abortAfter !== undefined && sent + piece.length >= request.abortAfter) {
              await write(piece.subarray(0, request.abortAfter - sent));
              // Let the server store what arrived, then drop the connection.
              await (request.beforeCut?.() ?? new Promise((r) => setTimeout(r, 150)));
              req.destroy();
              resolve({ status: 0, body: { aborted: true } });
              return;
            }
            await write(piece);
            sent += piece.length;
          }
          await write(Buffer.from('\r\n'));
        }
        if (request.fileFirst) for (const p of fieldParts) await write(p);
        for (const p of afterParts) await write(p);
        req.end(end);
      } catch (err) {
        if (!settled) reject(err as Error);
      }
    })();
  });
}

/** POST JSON over real HTTP. */
export async function postJson(url: string, body: unknown): Promise<HttpAnswer> {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

export function sha256(buf: Buffer): string {
  return crypto.createHash('sha256').update(buf).digest('hex');
}

/**
 * Deterministic bytes generated piece by piece, never all in memory: a seeded 1 MiB block,
 * each copy stamped with its piece number so no two pieces are alike.
 */
export async function* deterministicBytes(total: number, seed = 'stash', pieceSize = 1 << 20): AsyncGenerator<Buffer> {
  const block = Buffer.alloc(pieceSize);
  for (let o = 0, i = 0; o < pieceSize; o += 32, i++) {
    crypto.createHash('sha256').update(`${seed}:${i}`).digest().copy(block, o);
  }
  let left = total;
  for (let n = 0; left > 0; n++) {
    const size = Math.min(pieceSize, left);
    const piece = Buffer.from(block.subarray(0, size));
    if (size >= 4) piece.writeUInt32BE(n >>> 0, 0);
    left -= size;
    yield piece;
  }
}

/**
 * Random bytes that no type sniffer can mistake for a known format: a fixed ASCII lead-in
 * (magic numbers sit in the first bytes) followed by noise that is not valid UTF-8, so they
 * are always detected as application/octet-stream. Pure noise is now and then read as
 * MPEG-TS (0x47 at offset 0 and 188), which made tests flaky.
 */
export function randomBytes(n: number): Buffer {
  const out = crypto.randomBytes(n);
  const lead = Buffer.from('stash-test-data\xff', 'latin1');
  lead.copy(out, 0, 0, Math.min(lead.length, n));
  return out;
}
