import { Readable } from 'node:stream';
import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  DeleteObjectCommand,
  DeleteObjectsCommand,
  GetObjectCommand,
  HeadBucketCommand,
  HeadObjectCommand,
  ListMultipartUploadsCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
  UploadPartCommand,
  UploadPartCopyCommand,
  type CompletedPart,
} from '@aws-sdk/client-s3';
import { piecesFrom, type ByteSource } from '../lib/stream-pieces.ts';
import { PartialWriteError, StorageError, type Storage, type WriteAtOptions } from './storage.ts';
import { classifyStoreError, isNotFound } from './s3-errors.ts';
import { cover, coveredBytes, parsePiece, pieceName, piecePrefix, planParts, type PartPlan, type Piece, type Segment } from './s3-pieces.ts';

const KEY_PATTERN = /^[A-Za-z0-9_-]{8,128}$/;
/** S3's smallest part (all but the last). */
export const MIN_PART_BYTES = 5 * 1024 * 1024;
/** Checkpoint granularity: at most this much of a chunk is lost when a process dies (issue 10). */
export const DEFAULT_PIECE_BYTES = 8 * 1024 * 1024;
const MAX_PARTS = 10_000;
/**
 * How long the store may leave a request without a byte before it counts as unavailable: the
 * request then fails as any store failure does (503 with `retry`, and the client resumes). The
 * SDK waits for ever by default, so a store that went silent (a hung server, a partition, a NAT
 * that forgot the flow) held every upload and download that touched it, for good (and a status
 * call, where a chunk was partly written: otherwise status answers from the database).
 * It is silence, not total time: an 8 MiB piece on a slow link keeps its request alive. The
 * SDK tries a request three times, so a silent store is answered within about a minute.
 */
export const STORE_SILENCE_MS = 20_000;
/**
 * How long the store may stay silent on completing a multipart upload (finalize's last call).
 * AWS says completing "could take several minutes" and keeps the connection alive meanwhile by
 * sending spaces; an S3-compatible store may assemble the object in silence instead: moto took
 * 26 s for 1 GiB of 128 parts (2026-12-02), past STORE_SILENCE_MS, and every retry of the last
 * chunk started the copy over. Six times the silence allowed elsewhere: a hung store still fails.
 */
const COMPLETE_SILENCE_FACTOR = 6;
/** A store host that does not take the connection (its packets dropped) fails sooner. */
const CONNECT_TIMEOUT_MS = 5_000;
const COPY_CONCURRENCY = 4;
/**
 * How long a signed read stays good. The proxy it is handed to asks at once; what it must outlast
 * is a store whose clock runs ahead of this machine's, so it is the 15 minutes of disagreement S3
 * allows a signed request (a longer download is fine: only its start is checked).
 */
const SIGNED_READ_SECONDS = 15 * 60;

export interface S3Settings {
  endpoint: string | null;
  region: string;
  bucket: string;
  accessKeyId: string;
  secretAccessKey: string;
  forcePathStyle: boolean;
}

export interface S3StorageOptions {
  /** The upload chunk size: no piece crosses a chunk boundary, so a chunk's bytes can be reset alone. */
  chunkSize: number;
  /** Tests only: a smaller checkpoint, so a cut chunk needs kilobytes. */
  pieceSize?: number;
  log?: (message: string) => void;
  /** Tests only: a client pointed elsewhere (fault injection). */
  client?: S3Client;
  /** Tests only: a shorter STORE_SILENCE_MS. */
  silenceMs?: number;
}

/**
 * `silenceMs`: see STORE_SILENCE_MS; `null` for a client whose responses are streamed to a
 * downloader, where a pause is the downloader's (backpressure), not the store's.
 */
export function createS3Client(s3: S3Settings, silenceMs: number | null = STORE_SILENCE_MS): S3Client {
  const connectionTimeout = Math.min(CONNECT_TIMEOUT_MS, silenceMs ?? CONNECT_TIMEOUT_MS);
  return new S3Client({
    requestHandler: silenceMs === null ? { connectionTimeout } : { connectionTimeout, socketTimeout: silenceMs },
    endpoint: s3.endpoint ?? undefined,
    region: s3.region,
    forcePathStyle: s3.forcePathStyle,
    credentials: { accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey },
    // Many S3-compatible stores reject or mis-store the SDK's default streaming checksum framing;
    // integrity is checked end to end by the chunk SHA-256 (design §7) and files.sha256.
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  });
}

/**
 * The S3 driver (issue 10, server/README.md "S3 storage"). An unfinished object is a set of
 * piece objects `tmp/<key>/<start>` (≤ 8 MiB, never crossing a chunk): every node can list
 * and read them, so a chunk cut midway resumes on any process. finalize() turns the pieces
 * into the stored object `files/<key>` with one multipart upload whose parts are copied inside
 * the store (UploadPartCopy), then deletes the pieces. Writes hold at most one piece in
 * memory; reads stream.
 */
export class S3Storage implements Storage {
  readonly client: S3Client;
  /** GETs whose bodies go to a downloader: a deadline for the answer's start, no idle limit after. */
  private readonly streamClient: S3Client;
  /** CompleteMultipartUpload, which may be silent longer (COMPLETE_SILENCE_FACTOR). */
  private readonly completeClient: S3Client;
  private readonly silenceMs: number;
  private readonly bucket: string;
  private readonly chunkSize: number;
  private readonly pieceSize: number;
  private readonly log: (message: string) => void;

  constructor(s3: S3Settings, options: S3StorageOptions) {
    this.silenceMs = options.silenceMs ?? STORE_SILENCE_MS;
    this.client = options.client ?? createS3Client(s3, this.silenceMs);
    this.streamClient = options.client ?? createS3Client(s3, null);
    this.completeClient = options.client ?? createS3Client(s3, this.silenceMs * COMPLETE_SILENCE_FACTOR);
    this.bucket = s3.bucket;
    this.chunkSize = options.chunkSize;
    this.pieceSize = Math.min(options.pieceSize ?? DEFAULT_PIECE_BYTES, options.chunkSize);
    this.log = options.log ?? ((m) => console.error(m));
  }

  /** Start check: the bucket exists and these credentials may use it; one clear sentence otherwise. */
  async assertReady(): Promise<void> {
    try {
      await this.client.send(new HeadBucketCommand({ Bucket: this.bucket }));
    } catch (err) {
      const e = err as { name?: string; $metadata?: { httpStatusCode?: number } };
      const status = e.$metadata?.httpStatusCode;
      if (status === 404 || e.name === 'NoSuchBucket' || e.name === 'NotFound') {
        throw new Error(`S3 bucket "${this.bucket}" does not exist (S3_BUCKET); create it or fix the name.`);
      }
      if (status === 403 || status === 401) {
        throw new Error(`S3 refused access to bucket "${this.bucket}": check S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY.`);
      }
      throw new Error(`S3 store is not reachable (S3_ENDPOINT): ${e.name ?? String(err)}.`);
    }
  }

  async writeAt(key: string, offset: number, source: ByteSource, options: WriteAtOptions = {}): Promise<number> {
    checkKey(key);
    const { signal } = options;
    // Reading the source starts at once, while the store is asked where this write continues:
    // a client that sends a few bytes and hangs up must not lose them to that round trip.
    const preparing = this.prepareWrite(key, offset);
    preparing.catch(() => {});
    let pieceStart = offset;
    let buffered: Buffer[] = [];
    let bufferedBytes = 0;
    let carried = 0;
    let ready = false;
    const early: Buffer[] = [];
    let earlyBytes = 0;

    let durable = 0;
    const flush = async () => {
      if (bufferedBytes === carried) return;
      // A writer that lost its lease must not put a piece: it would replace the new writer's piece of the same name.
      if (signal?.aborted) throw new PartialWriteError(durable, signal.reason);
      const body = Buffer.concat(buffered, bufferedBytes);
      // Copied into the piece's body: the caller may free them now (WriteAtOptions.taken).
      options.taken?.(buffered);
      await this.send(`write ${key}@${pieceStart}`, () =>
        this.client.send(new PutObjectCommand({ Bucket: this.bucket, Key: pieceName(key, pieceStart), Body: body, ContentLength: body.length }), { abortSignal: signal }),
      );
      durable += bufferedBytes - carried;
      pieceStart += bufferedBytes;
      buffered = [];
      bufferedBytes = 0;
      carried = 0;
    };
    const boundary = () => Math.min(pieceStart + this.pieceSize, Math.floor(pieceStart / this.chunkSize) * this.chunkSize + this.chunkSize);
    const take = async (data: Buffer) => {
      let buf = data;
      while (buf.length > 0) {
        const room = boundary() - (pieceStart + bufferedBytes);
        const part = buf.subarray(0, room);
        buffered.push(part);
        bufferedBytes += part.length;
        buf = buf.subarray(part.length);
        if (pieceStart + bufferedBytes === boundary()) await flush();
      }
    };
    const settle = async () => {
      if (!ready) {
        const prep = await preparing;
        pieceStart = prep.pieceStart;
        if (prep.prefix) {
          buffered = [prep.prefix];
          bufferedBytes = carried = prep.prefix.length;
        }
        ready = true;
      }
      for (const b of early.splice(0)) await take(b);
      earlyBytes = 0;
    };

    try {
      // Not a stream's own iterator: that one joins queued pieces into a copy, and the pieces
      // reported as taken would not be the ones their owner can free.
      for await (const data of piecesFrom(source)) {
        early.push(data);
        earlyBytes += data.length;
        // Until the store answered, hold at most one piece (then wait for it: backpressure).
        if (ready || earlyBytes >= this.pieceSize) await settle();
      }
      await settle();
      await flush();
      return durable;
    } catch (err) {
      // Aborted (the lease is lost): what is held in memory is dropped, not stored, and a put
      // cut short by the abort is not a store failure (Storage contract).
      if (signal?.aborted) throw new PartialWriteError(durable, signal.reason);
      if (err instanceof StorageError || err instanceof PartialWriteError) throw err;
      // The source failed: what arrived is made durable and reported (Storage contract).
      try {
        await settle();
        await flush();
      } catch (storeErr) {
        // The store failed too (or the write was aborted meanwhile): only what was flushed before is durable.
        if (!ready && !(storeErr instanceof PartialWriteError)) throw storeErr;
      }
      throw new PartialWriteError(durable, err);
    }
  }

  /**
   * Where a write at `offset` starts its first piece. Pieces stay full-size: a resumed write
   * re-sends the short piece it continues (≤ 8 MiB), so every part but a chunk's last is large
   * enough to be copied inside the store. Older pieces from there on belong to an attempt this
   * write replaces and are deleted.
   */
  private async prepareWrite(key: string, offset: number): Promise<{ pieceStart: number; prefix: Buffer | null }> {
    const chunkStart = Math.floor(offset / this.chunkSize) * this.chunkSize;
    const pieces = await this.listPieces(key, chunkStart, chunkStart + this.chunkSize);
    const segs = cover(pieces, chunkStart, offset);
    const reached = chunkStart + coveredBytes(segs);
    const last = segs.at(-1);
    const merge = reached >= offset && last && last.piece.start < offset && offset - last.piece.start < this.pieceSize ? last.piece : null;
    const pieceStart = merge ? merge.start : offset;
    const prefix = merge ? await this.readAll(key, merge.start, offset) : null;
    await this.deleteNames(pieces.filter((p) => p.start > pieceStart || (p.start === pieceStart && !merge)).map((p) => p.name));
    return { pieceStart, prefix };
  }

  async storedBytes(key: string, start: number, end: number): Promise<number> {
    checkKey(key);
    return coveredBytes(cover(await this.listPieces(key, start, end), start, end));
  }

  async resetRange(key: string, start: number, end: number): Promise<void> {
    checkKey(key);
    const pieces = await this.listPieces(key, start, end);
    await this.deleteNames(pieces.filter((p) => p.start >= start && p.start < end).map((p) => p.name));
  }

  readUnfinished(key: string, start: number, end: number): Readable {
    checkKey(key);
    return Readable.from(this.unfinishedBytes(key, start, end), { objectMode: false });
  }

  private async *unfinishedBytes(key: string, start: number, end: number): AsyncGenerator<Buffer> {
    if (end <= start) return;
    const segments = cover(await this.listPieces(key, start, end), start, end);
    if (coveredBytes(segments) < end - start) throw new Error(`unfinished object ${key} lacks bytes in [${start}, ${end})`);
    yield* this.segmentBytes(key, segments);
  }

  async finalize(key: string, size: number): Promise<void> {
    checkKey(key);
    const target = storedName(key);
    const pieces = await this.listPieces(key, 0, size);
    if (size === 0) {
      await this.send(`finalize ${key}`, () => this.client.send(new PutObjectCommand({ Bucket: this.bucket, Key: target, Body: Buffer.alloc(0), ContentLength: 0 })));
    } else {
      const segments = cover(pieces, 0, size);
      if (coveredBytes(segments) !== size) throw new Error(`unfinished object ${key} holds ${coveredBytes(segments)} of ${size} bytes`);
      const plan = planParts(segments, MIN_PART_BYTES);
      if (plan.length > MAX_PARTS) throw new Error(`a file of ${size} bytes needs ${plan.length} parts; S3 allows ${MAX_PARTS}`);
      const created = await this.send(`finalize ${key}`, () => this.client.send(new CreateMultipartUploadCommand({ Bucket: this.bucket, Key: target })));
      const uploadId = created.UploadId ?? '';
      try {
        const parts = await mapLimit(plan, COPY_CONCURRENCY, (part, i) => this.uploadPart(key, target, uploadId, i + 1, part));
        await this.complete(key, size, uploadId, parts);
      } catch (err) {
        await this.client.send(new AbortMultipartUploadCommand({ Bucket: this.bucket, Key: target, UploadId: uploadId })).catch(() => {});
        throw err;
      }
      // An earlier attempt that died midway (or whose abort the store refused) left its upload
      // open, billed for its parts; with the file listed now, no discard will ever come for it.
      await this.abortOpenUploads(key).catch((err: unknown) => this.log(`s3: could not abort earlier uploads of ${key}: ${String(err)}`));
    }
    // The stored object is complete; leftover pieces would only cost space, never correctness.
    await this.deleteNames(pieces.map((p) => p.name)).catch((err: unknown) => this.log(`s3: could not delete pieces of ${key}: ${String(err)}`));
  }

  /**
   * The multipart upload's last call. Its answer can be lost after the store made the object
   * (a connection cut on the way back; the SDK's retry then meets an upload the store has
   * closed: NoSuchUpload, or moto's 500): an object of the right size under this upload's own
   * key can only be that one, so finalize is done.
   */
  private async complete(key: string, size: number, uploadId: string, parts: CompletedPart[]): Promise<void> {
    const target = storedName(key);
    try {
      await this.completeClient.send(new CompleteMultipartUploadCommand({ Bucket: this.bucket, Key: target, UploadId: uploadId, MultipartUpload: { Parts: parts } }));
    } catch (err) {
      const made = await this.stat(key).catch(() => null);
      if (made?.size !== size) throw this.fail(`finalize ${key}`, err);
      this.log(`s3: finalize ${key}: the store made the object though its answer was lost (${(err as Error).name})`);
    }
  }

  async discard(key: string): Promise<void> {
    checkKey(key);
    await this.deleteNames((await this.listPieces(key, 0, Infinity)).map((p) => p.name));
    // A finalize that died midway leaves a multipart upload; abort it so its parts are reclaimed.
    await this.abortOpenUploads(key);
  }

  /** Aborts every multipart upload open on `files/<key>` (each a finalize that never completed). */
  private async abortOpenUploads(key: string): Promise<void> {
    const open = await this.send(`abort uploads ${key}`, () => this.client.send(new ListMultipartUploadsCommand({ Bucket: this.bucket, Prefix: storedName(key) })));
    for (const u of open.Uploads ?? []) {
      if (u.Key !== storedName(key) || !u.UploadId) continue;
      try {
        await this.client.send(new AbortMultipartUploadCommand({ Bucket: this.bucket, Key: u.Key, UploadId: u.UploadId }));
      } catch (err) {
        // Aborted or completed by another process since the listing: nothing is left to reclaim.
        if (!isNotFound(err)) throw this.fail(`abort uploads ${key}`, err);
      }
    }
  }

  read(key: string, range?: { start: number; end: number }): Readable {
    checkKey(key);
    return Readable.from(this.objectBytes(key, range), { objectMode: false });
  }

  private async *objectBytes(key: string, range?: { start: number; end: number }): AsyncGenerator<Buffer> {
    // Lazy: nothing is asked of the store until the response starts reading, and a failure
    // before the first byte still reaches the error handler as a 503 (headers not yet sent).
    const res = await this.send(`read ${key}`, () => this.getObject(key, range));
    yield* this.bodyBytes(`read ${key}`, res.Body as Readable);
  }

  /**
   * A response body read by the server itself (read(): the files host's small files, previews,
   * re-hashing): a store that goes silent midway fails the read after the silence limit, counted
   * only while the reader waits for bytes (a reader that pauses is not the store's silence), and
   * a body cut midway is a StorageError (503, retry) like any store failure, not an unknown 500.
   */
  private async *bodyBytes(action: string, body: Readable): AsyncGenerator<Buffer> {
    const pieces = body[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
    try {
      for (;;) {
        let timer: NodeJS.Timeout | undefined;
        const silent = new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(Object.assign(new Error(`the store sent nothing for ${this.silenceMs} ms`), { name: 'TimeoutError' })), this.silenceMs);
        });
        let next: IteratorResult<Buffer>;
        try {
          next = await Promise.race([pieces.next(), silent]);
        } catch (err) {
          throw this.fail(action, err);
        } finally {
          clearTimeout(timer);
        }
        if (next.done) return;
        yield next.value;
      }
    } finally {
      body.destroy();
    }
  }

  async openRead(key: string, range?: { start: number; end: number }): Promise<Readable | null> {
    checkKey(key);
    try {
      return (await this.getObject(key, range)).Body as Readable;
    } catch (err) {
      if (isNotFound(err)) return null;
      throw this.fail(`read ${key}`, err);
    }
  }

  private getObject(key: string, range?: { start: number; end: number }) {
    return answeredWithin(this.silenceMs, (signal) =>
      this.streamClient.send(new GetObjectCommand({ Bucket: this.bucket, Key: storedName(key), Range: range ? `bytes=${range.start}-${range.end}` : undefined }), {
        abortSignal: signal,
      }),
    );
  }

  /**
   * A presigned GET of the stored object (files-host/accel-redirect.ts). It signs the host only, so
   * a proxy may add the `Range` it was told; the presigner loads at the first one (a lean process).
   */
  async signedRead(key: string): Promise<URL> {
    checkKey(key);
    const { getSignedUrl } = await import('@aws-sdk/s3-request-presigner');
    const command = new GetObjectCommand({ Bucket: this.bucket, Key: storedName(key) });
    return new URL(await getSignedUrl(this.client, command, { expiresIn: SIGNED_READ_SECONDS }));
  }

  async stat(key: string): Promise<{ size: number } | null> {
    checkKey(key);
    try {
      const head = await this.client.send(new HeadObjectCommand({ Bucket: this.bucket, Key: storedName(key) }));
      return { size: head.ContentLength ?? 0 };
    } catch (err) {
      if (isNotFound(err)) return null;
      throw this.fail(`stat ${key}`, err);
    }
  }

  async delete(key: string): Promise<void> {
    checkKey(key);
    await this.send(`delete ${key}`, () => this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: storedName(key) })));
  }

  async ping(): Promise<boolean> {
    try {
      await this.client.send(new HeadBucketCommand({ Bucket: this.bucket }));
      return true;
    } catch {
      return false;
    }
  }

  /** Every stored object's key and size (migration and backup manifests). */
  async *listStored(): AsyncGenerator<{ key: string; size: number }> {
    let token: string | undefined;
    do {
      const page = await this.send('list', () => this.client.send(new ListObjectsV2Command({ Bucket: this.bucket, Prefix: 'files/', ContinuationToken: token })));
      for (const o of page.Contents ?? []) if (o.Key) yield { key: o.Key.slice('files/'.length), size: o.Size ?? 0 };
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
  }

  private async uploadPart(key: string, target: string, uploadId: string, partNumber: number, part: PartPlan): Promise<CompletedPart> {
    if (part.kind === 'copy') {
      const { segment: s } = part;
      const res = await this.send(`finalize ${key}`, () =>
        this.client.send(
          new UploadPartCopyCommand({
            Bucket: this.bucket,
            Key: target,
            UploadId: uploadId,
            PartNumber: partNumber,
            CopySource: `${this.bucket}/${s.piece.name}`,
            CopySourceRange: `bytes=${s.from - s.piece.start}-${s.to - s.piece.start - 1}`,
          }),
        ),
      );
      return { PartNumber: partNumber, ETag: res.CopyPartResult?.ETag };
    }
    const body = Readable.from(this.segmentBytes(key, part.segments), { objectMode: false });
    // The SDK pipes the body into its request without listening for the body's errors: a piece
    // that cannot be read (deleted by a cancel meanwhile, the store failing) would be an uncaught
    // exception and leave the part's request waiting for bytes forever. Heard here, it ends the
    // request and is finalize's answer.
    const stop = new AbortController();
    let readFailure: unknown = null;
    body.once('error', (err) => {
      readFailure = err;
      stop.abort(err);
    });
    try {
      const res = await this.send(`finalize ${key}`, () =>
        this.client.send(new UploadPartCommand({ Bucket: this.bucket, Key: target, UploadId: uploadId, PartNumber: partNumber, Body: body, ContentLength: part.size }), {
          abortSignal: stop.signal,
        }),
      );
      return { PartNumber: partNumber, ETag: res.ETag };
    } catch (err) {
      throw readFailure ?? err;
    } finally {
      // A part refused by the store leaves its body half read: close it, and the piece it was reading.
      body.destroy();
    }
  }

  private async *segmentBytes(key: string, segments: readonly Segment[]): AsyncGenerator<Buffer> {
    for (const s of segments) yield* this.readSegment(key, s);
  }

  private async *readSegment(key: string, s: Segment): AsyncGenerator<Buffer> {
    const res = await this.send(`read ${key}`, () =>
      this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: s.piece.name, Range: `bytes=${s.from - s.piece.start}-${s.to - s.piece.start - 1}` })),
    );
    yield* this.bodyBytes(`read ${key}`, res.Body as Readable);
  }

  private async readAll(key: string, start: number, end: number): Promise<Buffer> {
    const parts: Buffer[] = [];
    for await (const b of this.readUnfinished(key, start, end)) parts.push(b as Buffer);
    return Buffer.concat(parts);
  }

  /** Pieces of `key` that may hold bytes of `[start, end)` (a piece starts at most one piece size before). */
  private async listPieces(key: string, start: number, end: number): Promise<Piece[]> {
    const pieces: Piece[] = [];
    const from = Math.max(0, start - this.pieceSize);
    let token: string | undefined;
    do {
      const page = await this.send(`list ${key}`, () =>
        this.client.send(
          new ListObjectsV2Command({
            Bucket: this.bucket,
            Prefix: piecePrefix(key),
            ContinuationToken: token,
            StartAfter: from > 0 && !token ? pieceName(key, from - 1) : undefined,
          }),
        ),
      );
      for (const o of page.Contents ?? []) {
        const p = o.Key ? parsePiece(key, o.Key, o.Size ?? 0) : null;
        if (p && p.start < end) pieces.push(p);
      }
      const lastKey = page.Contents?.at(-1)?.Key;
      const lastStart = lastKey ? (parsePiece(key, lastKey, 0)?.start ?? 0) : 0;
      token = page.IsTruncated && lastStart < end ? page.NextContinuationToken : undefined;
    } while (token);
    return pieces;
  }

  private async deleteNames(names: string[]): Promise<void> {
    for (let i = 0; i < names.length; i += 1000) {
      const batch = names.slice(i, i + 1000);
      await this.send('delete pieces', () => this.client.send(new DeleteObjectsCommand({ Bucket: this.bucket, Delete: { Objects: batch.map((Key) => ({ Key })), Quiet: true } })));
    }
  }

  private async send<T>(action: string, run: () => Promise<T>): Promise<T> {
    try {
      return await run();
    } catch (err) {
      throw this.fail(action, err);
    }
  }

  private fail(action: string, err: unknown): StorageError {
    const failure = classifyStoreError(err, action);
    this.log(`s3 store error: ${failure.detail}`);
    return failure;
  }
}

/** `request`, given up (TimeoutError) when its answer has not begun within `ms`. */
async function answeredWithin<T>(ms: number, request: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const deadline = new AbortController();
  const timer = setTimeout(() => deadline.abort(Object.assign(new Error(`the store sent no answer in ${ms} ms`), { name: 'TimeoutError' })), ms);
  try {
    return await request(deadline.signal);
  } finally {
    clearTimeout(timer);
  }
}

export function storedName(key: string): string {
  return `files/${key}`;
}

function checkKey(key: string): string {
  if (!KEY_PATTERN.test(key)) throw new Error(`invalid storage key: ${key}`);
  return key;
}

async function mapLimit<T, R>(items: readonly T[], limit: number, run: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      results[i] = await run(items[i] as T, i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}
