import crypto from 'node:crypto';
import type { Database } from '../../db/index.ts';
import { HttpError, conflict } from '../../http/errors.ts';
import { createLeasedChunk, listChunks, releaseChunkLease, renewChunkLease, settleChunk, takeChunkLease, type ChunkState } from './uploads.repository.ts';

/** Design §7: a request that loses a race for a chunk gets 409 and a message it can act on. */
export const busyMessage = (chunkIndex: number) => `Chunk ${chunkIndex} of this upload is being received by another request; retry shortly.`;

export class LeaseLostError extends HttpError {
  constructor(chunkIndex: number) {
    super(409, `Chunk ${chunkIndex} of this upload was taken over by another request; ask files/upload/status and resume from there.`);
  }
}

export const uploadGone = () => new HttpError(410, 'This upload was cancelled or has expired; start it again.');

/**
 * The write lease one request holds on one chunk (design §7: one writer per chunk, across
 * processes, kept in the database). It is renewed while the chunk streams; the writer stops
 * writing on its own once a third of the lease is left unconfirmed, well before another request
 * may take the lease over, so no two writers ever touch the same bytes.
 */
export class ChunkLease {
  private until: number;
  private lost = false;
  private readonly aborter = new AbortController();
  /**
   * Aborts (reason: a LeaseLostError) once a renewal finds the lease gone or it was unconfirmed
   * too long: the store must take no more bytes from this writer, and its body no more reading.
   */
  readonly signal = this.aborter.signal;
  private readonly timer: NodeJS.Timeout;

  private constructor(
    private readonly db: Database,
    readonly uploadId: string,
    readonly chunkIndex: number,
    readonly writer: string,
    private readonly leaseMs: number,
    until: number,
  ) {
    this.until = until;
    this.timer = setInterval(() => void this.renew(), Math.max(50, Math.floor(leaseMs / 5)));
    this.timer.unref();
  }

  /**
   * Takes the chunk's lease. Answers `complete` (with the row) when the chunk is already whole,
   * throws 409 while another writer holds a live lease and 410 when the upload is gone.
   * `takenOver` says the previous writer died holding it: its record is stale, the store knows better.
   */
  static async acquire(
    db: Database,
    uploadId: string,
    chunkIndex: number,
    leaseMs: number,
  ): Promise<{ kind: 'complete'; row: ChunkState } | { kind: 'lease'; lease: ChunkLease; row: ChunkState; takenOver: boolean }> {
    const writer = crypto.randomUUID();
    const createdUntil = Date.now() + leaseMs;
    const made = await createLeasedChunk(db, uploadId, chunkIndex, writer, createdUntil);
    if (made === 'gone') throw uploadGone();
    if (made === 'created') {
      const fresh: ChunkState = { chunkIndex, bytes: 0, complete: false, sha256: null, writer: null, leaseUntil: null };
      return { kind: 'lease', lease: new ChunkLease(db, uploadId, chunkIndex, writer, leaseMs, createdUntil), row: fresh, takenOver: false };
    }
    const before = (await listChunks(db, uploadId)).find((c) => c.chunkIndex === chunkIndex);
    if (!before) throw uploadGone();
    if (before.complete) return { kind: 'complete', row: before };
    const now = Date.now();
    if (!(await takeChunkLease(db, uploadId, chunkIndex, writer, now, now + leaseMs))) {
      const row = (await listChunks(db, uploadId)).find((c) => c.chunkIndex === chunkIndex);
      if (!row) throw uploadGone();
      if (row.complete) return { kind: 'complete', row };
      throw conflict(busyMessage(chunkIndex));
    }
    const lease = new ChunkLease(db, uploadId, chunkIndex, writer, leaseMs, now + leaseMs);
    return { kind: 'lease', lease, row: before, takenOver: before.writer !== null };
  }

  private async renew(): Promise<void> {
    if (this.lost) return;
    const until = Date.now() + this.leaseMs;
    try {
      if (await renewChunkLease(this.db, this.uploadId, this.chunkIndex, this.writer, until)) {
        this.until = until;
      } else {
        this.lost = true;
        this.stop();
        this.aborter.abort(new LeaseLostError(this.chunkIndex));
      }
    } catch {
      // A failed renewal is retried on the next tick; the local deadline in check() still holds.
    }
  }

  /** Null while the lease is safely held; otherwise the error that stops the write. */
  check(): HttpError | null {
    if (!this.lost && Date.now() <= this.until - this.leaseMs / 3) return null;
    const err = new LeaseLostError(this.chunkIndex);
    this.aborter.abort(err);
    return err;
  }

  private settled = false;

  /** Records the chunk's state and releases the lease (compare-and-set on the writer). */
  async settle(state: { bytes: number; complete: boolean; sha256: string | null }): Promise<void> {
    this.stop();
    this.settled = true;
    if (await settleChunk(this.db, this.uploadId, this.chunkIndex, this.writer, state)) return;
    const row = (await listChunks(this.db, this.uploadId)).find((c) => c.chunkIndex === this.chunkIndex);
    throw row ? new LeaseLostError(this.chunkIndex) : uploadGone();
  }

  /** Whether the upload row still exists (a lost lease on a cancelled upload answers 410). */
  async gone(): Promise<boolean> {
    return !(await listChunks(this.db, this.uploadId)).some((c) => c.chunkIndex === this.chunkIndex);
  }

  stop(): void {
    clearInterval(this.timer);
  }

  /**
   * Lets go of a lease whose writer refused the request before writing anything (a bound, a bad
   * offset), keeping the chunk's record as it was, so the next request need not wait for it to lapse.
   */
  async release(): Promise<void> {
    this.stop();
    if (this.settled || this.lost) return;
    this.settled = true;
    await releaseChunkLease(this.db, this.uploadId, this.chunkIndex, this.writer);
  }
}
