import fs from 'node:fs';
import { promisify } from 'node:util';
import { Writable } from 'node:stream';

const writev = promisify(fs.writev);
const fdatasync = promisify(fs.fdatasync);

/**
 * Bytes gathered before one positioned write (issue 9: few, large syscalls). 1 MiB is already
 * one syscall per sixteen socket reads; more only held memory per upload while the disk syncs
 * (8 uploads at once held 8 × 4 MiB here; bench/README.md has the figures).
 */
export const SINK_BUFFER_BYTES = 1024 * 1024;
/** How often the written bytes are made durable and checkpointed while a chunk streams (design §7: ≤ 8 MiB lost to a crash). */
export const CHECKPOINT_BYTES = 8 * 1024 * 1024;
/** A slow or stalled sender is checkpointed this soon after its last write, so a crash loses at most this moment's bytes. */
export const CHECKPOINT_MS = 250;

/**
 * A write stream into an open file at a byte position that (a) gathers pieces into large
 * `writev` calls, (b) every CHECKPOINT_BYTES starts an fdatasync in the background and, once it
 * returns, reports the bytes it covered through `onDurable` — so syncing overlaps with writing
 * instead of stalling the socket — and (c) finishes only after a last fdatasync: the stream's
 * 'finish' means every byte is on stable storage (design §7, issue 9).
 */
export class DurableSink extends Writable {
  /** Bytes handed to the kernel (written, maybe not yet durable). */
  written = 0;
  /** Bytes known durable. */
  durable = 0;
  private syncing: Promise<void> | null = null;
  private syncError: unknown = null;
  private writing: Promise<void> | null = null;
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly fd: number,
    private readonly position: number,
    private readonly onDurable: (bytes: number) => Promise<void>,
    /** Called with each batch of pieces once written: the sink never reads them again (WriteAtOptions.taken). */
    private readonly taken?: (pieces: readonly Buffer[]) => void,
  ) {
    super({ highWaterMark: SINK_BUFFER_BYTES, decodeStrings: true });
  }

  override _write(chunk: Buffer, _enc: BufferEncoding, done: (err?: Error | null) => void): void {
    this.track(this.writeMany([chunk])).then(() => done(), done);
  }

  override _writev(chunks: { chunk: Buffer }[], done: (err?: Error | null) => void): void {
    this.track(this.writeMany(chunks.map((c) => c.chunk))).then(() => done(), done);
  }

  override _final(done: (err?: Error | null) => void): void {
    this.syncNow().then(() => done(), done);
  }

  override _destroy(err: Error | null, done: (err?: Error | null) => void): void {
    this.stopTimer();
    done(err);
  }

  private track(p: Promise<void>): Promise<void> {
    this.writing = p.finally(() => (this.writing = null));
    return this.writing;
  }

  private async writeMany(buffers: Buffer[]): Promise<void> {
    if (this.syncError) throw this.syncError as Error;
    let pending = buffers;
    while (pending.length > 0) {
      const { bytesWritten: n } = await writev(this.fd, pending, this.position + this.written);
      this.written += n;
      pending = dropWritten(pending, n);
    }
    this.taken?.(buffers);
    if (this.written - this.durable >= CHECKPOINT_BYTES) this.startCheckpoint();
    else if (!this.timer) {
      this.timer = setTimeout(() => {
        this.timer = null;
        this.startCheckpoint();
      }, CHECKPOINT_MS);
      this.timer.unref();
    }
  }

  private startCheckpoint(): void {
    this.stopTimer();
    if (this.syncing || this.durable === this.written) return;
    this.syncing = this.checkpoint().finally(() => (this.syncing = null));
  }

  private stopTimer(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  private async checkpoint(): Promise<void> {
    const upTo = this.written;
    try {
      await fdatasync(this.fd);
      this.durable = upTo;
      await this.onDurable(upTo);
    } catch (err) {
      this.syncError = err;
    }
  }

  /** Waits for the write and sync under way, then makes everything written so far durable. */
  async syncNow(): Promise<void> {
    this.stopTimer();
    if (this.writing) await this.writing.catch(() => {});
    if (this.syncing) await this.syncing;
    if (this.syncError) throw this.syncError as Error;
    if (this.durable === this.written) return;
    const upTo = this.written;
    await fdatasync(this.fd);
    this.durable = upTo;
    await this.onDurable(upTo);
  }
}

function dropWritten(buffers: Buffer[], n: number): Buffer[] {
  let left = n;
  const rest: Buffer[] = [];
  for (const b of buffers) {
    if (left >= b.length) {
      left -= b.length;
    } else {
      rest.push(left > 0 ? b.subarray(left) : b);
      left = 0;
    }
  }
  return rest;
}
