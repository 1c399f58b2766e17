import type { Readable } from 'node:stream';
import type { Storage } from '../../storage/storage.ts';
import { PartialWriteError } from '../../storage/storage.ts';
import type { HttpError } from '../../http/errors.ts';
import { OffThreadSha256 } from '../../lib/sha256-off-thread.ts';
import { piecesOf } from '../../lib/stream-pieces.ts';
import { PieceRelease } from '../../lib/body-pieces.ts';

export interface WriteOutcome {
  /** Bytes of `source` stored (all of them unless `error` is set). */
  written: number;
  /** SHA-256 hex of `seed` plus every byte written; only meaningful when `error` is null. */
  sha256: string;
  /** Why the write stopped early: a limit the bytes crossed (an HttpError), the source failing, or the store. */
  error: unknown;
  /** `error` is the source's: the sender's body broke off (a cut connection), not the store. */
  fromSource: boolean;
}

export interface WriteOptions {
  /**
   * Called with the running byte count; returning an HttpError stops the write with it. It may
   * answer with a promise now and then (a bound asked of the database): the body waits for it.
   */
  limit?: (bytesSoFar: number) => HttpError | null | Promise<HttpError | null>;
  /** Bytes already stored before `offset` that belong to the same hash (a resumed chunk). */
  seed?: Readable;
  /** Once aborted, the store takes no more of these bytes (Storage.writeAt). */
  signal?: AbortSignal;
  /** False for bytes never resumed (Storage.writeAt's option). */
  resumable?: boolean;
}

/**
 * Streams `source` into the unfinished object at `offset`, hashing on the way (on a worker
 * thread, lib/sha256-off-thread.ts): nothing is held in memory beyond the stream's own buffers
 * and the hasher's bounded batches (issue 3: never buffer an 80 MB chunk).
 */
export async function streamIntoStorage(storage: Storage, key: string, offset: number, source: Readable, options: WriteOptions = {}): Promise<WriteOutcome> {
  const hash = new OffThreadSha256();
  try {
    if (options.seed) await hash.feed(options.seed);
    const outcome = await hashAndStore(storage, key, offset, source, hash, options);
    // A hashing thread that failed is the server's fault, not the sender's: it throws (500) and
    // the client sends the chunk again.
    return outcome.error === null ? { ...outcome, sha256: await hash.digest() } : outcome;
  } finally {
    hash.dispose();
  }
}

async function hashAndStore(storage: Storage, key: string, offset: number, source: Readable, hash: OffThreadSha256, options: WriteOptions): Promise<WriteOutcome> {
  let seen = 0;
  let stopped: HttpError | null = null;
  let sourceFailed = false;
  // A generator, not a piped Transform: nothing is read from `source` before storage starts
  // consuming, so an early limit error can never fire while nobody listens.
  async function* metered(): AsyncGenerator<Buffer> {
    // Read by hand, not with for-await, to tell the source's failure (a cut connection) from the
    // store's; `return()` below ends it as for-await would when the store stops early.
    const pieces = piecesOf(source);
    try {
      for (;;) {
        let next: IteratorResult<Buffer>;
        try {
          next = await pieces.next();
        } catch (err) {
          sourceFailed = true;
          throw err;
        }
        if (next.done) return;
        const buf = next.value;
        seen += buf.length;
        const verdict = options.limit?.(seen) ?? null;
        stopped = verdict instanceof Promise ? await verdict : verdict;
        if (stopped) throw stopped;
        await hash.update(buf);
        yield buf;
      }
    } finally {
      await pieces.return(undefined);
    }
  }
  // The hash copies each piece as it passes, so once stored a claimed body piece is read by nothing.
  const release = new PieceRelease();
  try {
    const written = await storage.writeAt(key, offset, metered(), { signal: options.signal, resumable: options.resumable, taken: (pieces) => release.taken(pieces) });
    release.finish();
    return { written, sha256: '', error: stopped, fromSource: false };
  } catch (err) {
    const fromSource = stopped === null && sourceFailed;
    if (err instanceof PartialWriteError) return { written: err.bytesWritten, sha256: '', error: stopped ?? meterError(err.cause), fromSource };
    // A store that failed without counting (a driver refusing up front): nothing is known stored.
    return { written: 0, sha256: '', error: stopped ?? err, fromSource };
  }
}

function meterError(cause: unknown): unknown {
  return cause ?? new Error('write interrupted');
}
