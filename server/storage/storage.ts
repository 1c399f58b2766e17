import type { Readable } from 'node:stream';
import type { ByteSource } from '../lib/stream-pieces.ts';
import { HttpError } from '../http/errors.ts';

/**
 * Where file bytes live (style habit 5: handed in, never global). An object is first
 * "unfinished" — written piecewise at byte offsets while chunks arrive in any order — then
 * finalized into a stored object in place, with no second pass over its bytes. On S3 an
 * unfinished object is a multipart upload and each 80 MB chunk is one part (offset / chunk
 * size = part number); a part cannot be appended to, so an S3 driver keeps a chunk cut off
 * midway as a staging object and uploads the part once the chunk is whole. finalize() is
 * CompleteMultipartUpload; `size` lets local disk trim and S3 check.
 */
export interface Storage {
  /**
   * Writes `source` into the unfinished object `key` starting at byte `offset`. One call never
   * crosses a chunk boundary (offset and offset + bytes stay inside one chunk of the driver's
   * chunk size). Resolves with the number of bytes written only once they are durable (design
   * §7: fsync on disk, acknowledged by the store on S3); when `source` fails midway, the bytes
   * that arrived stay written and durable, and the error carries their count as `bytesWritten`.
   * Once `options.signal` aborts (the writer lost its chunk lease, design §7), the driver stores
   * nothing more — not even bytes it already received and holds — and rejects with a
   * PartialWriteError counting only what was durable before: another writer owns those bytes now.
   * `source` is a stream or any async iterable of Buffers; an iterable that throws is a source
   * that failed midway.
   */
  writeAt(key: string, offset: number, source: ByteSource, options?: WriteAtOptions): Promise<number>;
  /**
   * How many bytes of `[start, end)` of the unfinished object are durably stored, contiguous
   * from `start`, read from the store itself rather than from a database record: after a
   * crash midway through a chunk this is what `files/upload/status` reports (design §7).
   * A driver may under-report by at most its checkpoint granularity (≤ 8 MiB), never over-report.
   */
  storedBytes(key: string, start: number, end: number): Promise<number>;
  /** Forgets the bytes of `[start, end)` (a chunk refused by its size or checksum), so storedBytes reports 0 there. */
  resetRange(key: string, start: number, end: number): Promise<void>;
  /** Reads back `[start, end)` of an unfinished object (to re-hash a chunk resumed midway). */
  readUnfinished(key: string, start: number, end: number): Readable;
  /** Makes the unfinished object `key` a stored object of `size` bytes. */
  finalize(key: string, size: number): Promise<void>;
  /** Drops an unfinished object and reclaims its bytes. Missing keys are fine. */
  discard(key: string): Promise<void>;
  /** Streams a stored object, or `[start, end]` of it (inclusive, as HTTP ranges are). */
  read(key: string, range?: { start: number; end: number }): Readable;
  /**
   * read() once the store has answered: null when the object is gone, a StorageError when the
   * store cannot tell. The files host asks this before it answers, so a file deleted since it
   * was cached is a 404 and not a failed read after the status is chosen.
   */
  openRead(key: string, range?: { start: number; end: number }): Promise<Readable | null>;
  /**
   * A stored object's size, or null when there is none. A store that cannot tell right now
   * (unreachable, out of file descriptors) throws a StorageError: "gone" would answer 404 for a
   * file that is still there.
   */
  stat(key: string): Promise<{ size: number } | null>;
  /**
   * stat() answered synchronously, for stores where that is one system call on a cached inode
   * (local disk): the files host checks a cached file still exists on every request (issue 9),
   * and a thread-pool round trip and a promise cost more than the call itself.
   */
  statNow?(key: string): { size: number } | null;
  /**
   * Whether the object can be found right now: false when it is gone and also when it cannot be
   * looked at (callers that must tell those apart ask statNow). One `access` call, no stat
   * buffer to fill: the files host's fast path asks it on every cached request and hands any
   * false to the route, which asks statNow.
   */
  existsNow?(key: string): boolean;
  /**
   * Opens a stored object as a file descriptor the caller reads and closes, or null when it is
   * gone (a StorageError when it is there but cannot be opened now, as stat), for stores that
   * are files on this machine (local disk): the files host then reads downloads into buffers it
   * reuses (files-host/send-file.ts). Synchronous for the reason
   * statNow is: opening a cached inode costs less than a thread-pool round trip, which on a
   * Range request is a good part of the time to the first byte.
   */
  openStoredNow?(key: string): number | null;
  /**
   * Where a stored object lies under the store's `files/` folder (`<first two of key>/<key>`),
   * for stores that are files on this machine: a proxy in front that reads that folder itself
   * is pointed at it (files-host/accel-redirect.ts).
   */
  storedPathWithin?(key: string): string;
  /**
   * An address that reads a stored object for a short while without the store's credentials (a
   * presigned GET on S3), for stores reached over HTTP: a proxy in front fetches it itself
   * (files-host/accel-redirect.ts).
   */
  signedRead?(key: string): Promise<URL>;
  /** Deletes a stored object. Missing keys are fine. */
  delete(key: string): Promise<void>;
  /** Whether the store answers (for /healthz). */
  ping(): Promise<boolean>;
  /** Throws with one clear message when the store cannot be used at all (missing bucket, bad credentials); absent where nothing can be wrong. */
  assertReady?(): Promise<void>;
}

export interface WriteAtOptions {
  signal?: AbortSignal;
  /**
   * Called, in the order of `source`, with pieces whose bytes the store has written or copied
   * and will not read again, so that a caller owning their memory can free it at once
   * (lib/body-pieces.ts). Pieces not reported (a failed write) are simply left to the GC.
   */
  taken?: (pieces: readonly Buffer[]) => void;
  /**
   * False when nobody will ask storedBytes about these bytes (a whole file in one request: a
   * body cut short is dropped, never resumed). A driver may then keep no record of their
   * progress; they are made durable all the same.
   */
  resumable?: boolean;
}

export class PartialWriteError extends Error {
  constructor(
    readonly bytesWritten: number,
    override readonly cause: unknown,
  ) {
    super(`write interrupted after ${bytesWritten} bytes`);
    this.name = 'PartialWriteError';
  }
}

/**
 * A failure of the store, from any driver, answered with the design §5 shape by the one error
 * handler (it is an HttpError): 503 when trying again later can help (unreachable, throttled,
 * out of file descriptors), 500 when the operator must fix the configuration (missing bucket,
 * access denied). The driver logs the store's own words; the client gets a sentence it can act on.
 */
export class StorageError extends HttpError {
  constructor(
    statusCode: 500 | 503,
    message: string,
    readonly detail: string,
  ) {
    super(statusCode, message, statusCode === 503 ? { retry: true } : {}, statusCode === 503 ? { 'retry-after': '5' } : {});
    this.name = 'StorageError';
  }
}

export const STORE_UNAVAILABLE = 'The file store is unavailable right now; please try again shortly.';

/** Whether a stored object exists, without a thread-pool round trip where the store allows it. */
export function stillStored(storage: Storage, key: string): boolean | Promise<boolean> {
  if (storage.statNow) return storage.statNow(key) !== null;
  return storage.stat(key).then((s) => s !== null);
}
