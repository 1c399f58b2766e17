import fs from 'node:fs';
import { promisify } from 'node:util';
import { Writable } from 'node:stream';
import { slotsForWriter } from './aligned-slots.ts';
import { BufferedWriter, DirectWriter, type SinkWriter } from './sink-writers.ts';

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
 * writes — direct ones past the page cache when `directFd` is given (sink-writers.ts) — (b)
 * every CHECKPOINT_BYTES starts an fdatasync in the background and, once it returns, reports
 * the bytes it covered through `onDurable` — so syncing overlaps with writing instead of
 * stalling the socket — and (c) finishes only after a last fdatasync: the stream's 'finish'
 * means every byte is on stable storage (design §7, issue 9).
 */
export class DurableSink extends Writable {
  /** Bytes known durable. */
  durable = 0;
  private syncing: Promise<void> | null = null;
  private syncError: unknown = null;
  private writing: Promise<void> | null = null;
  private timer: NodeJS.Timeout | null = null;
  private readonly writer: SinkWriter;
  /** The direct writer's claim on the large slots, given up once its last write has ended. */
  private readonly releaseSlots: () => void = () => {};
  private readonly taken?: (pieces: readonly Buffer[]) => void;

  constructor(
    private readonly fd: number,
    position: number,
    private readonly onDurable: (bytes: number) => Promise<void>,
    options: {
      /** Called with each batch of pieces once taken: the sink never reads them again (WriteAtOptions.taken). */
      taken?: (pieces: readonly Buffer[]) => void;
      /** The same file opened with O_DIRECT: whole 4 KiB blocks go through it. */
      directFd?: number;
    } = {},
  ) {
    super({ highWaterMark: SINK_BUFFER_BYTES, decodeStrings: true });
    this.taken = options.taken;
    if (options.directFd === undefined) {
      this.writer = new BufferedWriter(fd, position);
    } else {
      const { slots, release } = slotsForWriter();
      this.writer = new DirectWriter(fd, options.directFd, position, slots);
      this.releaseSlots = release;
    }
  }

  /** Bytes handed to the kernel (written, maybe not yet durable). */
  get written(): number {
    return this.writer.written;
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
    this.writer.close();
    void this.writer.settled().then(this.releaseSlots);
    done(err);
  }

  private track(p: Promise<void>): Promise<void> {
    this.writing = p.finally(() => (this.writing = null));
    return this.writing;
  }

  private async writeMany(buffers: Buffer[]): Promise<void> {
    if (this.syncError) throw this.syncError as Error;
    await this.writer.take(buffers);
    this.taken?.(buffers);
    if (this.written - this.durable >= CHECKPOINT_BYTES) this.startCheckpoint();
    else if (!this.timer) {
      this.timer = setTimeout(() => {
        this.timer = null;
        this.startCheckpoint(true);
      }, CHECKPOINT_MS);
      this.timer.unref();
    }
  }

  /** `flush`: a stalled sender's bytes still held for a full block are written first (the timer's checkpoint). */
  private startCheckpoint(flush = false): void {
    this.stopTimer();
    if (this.syncing) return;
    this.syncing = this.checkpoint(flush).finally(() => (this.syncing = null));
  }

  private stopTimer(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  private async checkpoint(flush: boolean): Promise<void> {
    try {
      if (flush) await this.writer.flush();
      const upTo = this.written;
      if (upTo === this.durable) return;
      await fdatasync(this.fd);
      this.durable = upTo;
      await this.onDurable(upTo);
    } catch (err) {
      this.syncError = err;
    }
  }

  /** Resolves once no write or sync of the sink is under way, whatever their outcome: then its descriptors may be closed. */
  async settled(): Promise<void> {
    await this.writing?.catch(() => {});
    await this.syncing;
    await this.writer.settled();
  }

  /**
   * Waits for the write and sync under way, then makes everything written so far durable. A
   * flush that fails (the disk filled midway) still syncs and reports what the kernel took before
   * it, then throws: the client resumes after those bytes, not from the last checkpoint.
   */
  async syncNow(): Promise<void> {
    this.stopTimer();
    if (this.writing) await this.writing.catch(() => {});
    if (this.syncing) await this.syncing;
    if (this.syncError) throw this.syncError as Error;
    const flushed = await this.writer.flush().then(
      () => null,
      (error: unknown) => ({ error }),
    );
    if (this.durable !== this.written) {
      const upTo = this.written;
      await fdatasync(this.fd);
      this.durable = upTo;
      await this.onDurable(upTo);
    }
    if (flushed) throw flushed.error;
  }
}
