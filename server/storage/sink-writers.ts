import fs from 'node:fs';
import { promisify } from 'node:util';
import type { AlignedSlots } from './aligned-slots.ts';

const writev = promisify(fs.writev);
const write = promisify(fs.write);

/**
 * File offsets, lengths and memory of a direct write are kept on 4 KiB boundaries: the largest
 * logical block size disks use (most take 512), and the page size, so a direct write never
 * shares a page with bytes written through the page cache.
 */
export const DIRECT_ALIGN = 4096;

/** How DurableSink hands its bytes to the kernel. */
export interface SinkWriter {
  /** Bytes from the write's start that the kernel holds (written, maybe not yet durable), in order. */
  readonly written: number;
  /** Takes the pieces; once it resolves the caller may reuse or free them. */
  take(pieces: Buffer[]): Promise<void>;
  /** Hands the kernel everything taken so far. */
  flush(): Promise<void>;
  /** Gives back what the writer holds, once its writes have ended; call once, after the last take. */
  close(): void;
  /** Resolves once no write of this writer is under way (before its descriptors are closed); never rejects. */
  settled(): Promise<void>;
}

/** Through the page cache: each batch of pieces in one positioned `writev`. */
export class BufferedWriter implements SinkWriter {
  written = 0;

  constructor(
    private readonly fd: number,
    private readonly position: number,
  ) {}

  async take(pieces: Buffer[]): Promise<void> {
    await writevAll(this.fd, pieces, this.position + this.written, (n) => (this.written += n));
  }

  async flush(): Promise<void> {}

  close(): void {}

  // Its writes run inside take(), which the sink awaits.
  async settled(): Promise<void> {}
}

interface Slot {
  buffer: Buffer;
  /** File position of buffer[0], a multiple of DIRECT_ALIGN. */
  base: number;
  /** buffer[from, fill) is taken and not yet handed to the kernel. */
  from: number;
  fill: number;
}

/**
 * Issue 9, durable ingest at disk speed: the pieces are copied into aligned slots (aligned-slots.ts) and each
 * full slot goes to the disk with `O_DIRECT`, past the page cache. The virtual machines this runs
 * on give free memory back to their host, which must back a page again before the kernel can
 * fill it: `dd conv=fdatasync` into a new file made 303–365 MB/s at 2.6–3.2 s of system CPU per
 * GiB, the same dd with `oflag=direct` 1.7–2.0 GB/s at 0.12–0.16 s (bench/README.md). Direct
 * writes also spare the copy into the cache everywhere else, and leave the cache to the files
 * being read.
 *
 * Only the writer's own bytes are ever written: the ends of a range that are not on a 4 KiB
 * boundary (a resume's first bytes, a chunk's last, what a stalled sender's checkpoint flushes)
 * go through the page cache on `fd`, so a block shared with another chunk's write is never
 * rewritten from a stale copy. One disk write is under way at a time, so `written` grows in
 * order; while it runs the next slot fills, and a third is not taken before it ends.
 *
 * A slot is held only while bytes wait in it: it is taken when bytes come and given back once a
 * flush has written them, so a sender gone quiet (its checkpoint flushes) holds none. When the
 * process's slots are all in use (a bounded pool, aligned-slots.ts) bytes go through the page
 * cache instead, as everything did before: a crowd of uploads, slow or not, costs no more memory
 * than it did without direct writes.
 */
export class DirectWriter implements SinkWriter {
  written = 0;
  /** File position after the last byte taken. */
  private end: number;
  private slot: Slot | null = null;
  private chain: Promise<void> = Promise.resolve();
  private failure: { error: unknown } | null = null;
  /** Set by close(): a take still under way (a destroyed sink's) takes no slot and writes nothing more. */
  private closed = false;

  constructor(
    private readonly fd: number,
    private readonly directFd: number,
    private readonly position: number,
    private readonly slots: AlignedSlots,
  ) {
    this.end = position;
  }

  async take(pieces: Buffer[]): Promise<void> {
    for (const [i, piece] of pieces.entries()) {
      let at = 0;
      while (at < piece.length) {
        if (this.closed) return;
        this.throwIfFailed();
        const slot = this.slot ?? this.openSlot();
        if (!slot) return this.takeThroughCache([piece.subarray(at), ...pieces.slice(i + 1)]);
        const n = piece.copy(slot.buffer, slot.fill, at);
        slot.fill += n;
        at += n;
        this.end += n;
        if (slot.fill === slot.buffer.length) await this.writeFull(slot);
      }
    }
    this.throwIfFailed();
  }

  /** Writes what waits in the slot and gives the slot back: a quiet sender holds no memory. */
  async flush(): Promise<void> {
    const slot = this.slot;
    if (slot) {
      this.slot = null;
      this.queue(slot, slot.from, slot.fill, true);
    }
    await this.chain;
    this.throwIfFailed();
  }

  close(): void {
    this.closed = true;
    const slot = this.slot;
    this.slot = null;
    // The filling slot is given back once the writes queued before it end.
    if (slot) void this.chain.then(() => this.slots.give(slot.buffer));
  }

  settled(): Promise<void> {
    return this.chain;
  }

  /** A slot for the bytes from `end` on, its start on a block boundary; null when the pool has none free. */
  private openSlot(): Slot | null {
    const buffer = this.slots.take();
    if (!buffer) return null;
    const base = this.end - (this.end % DIRECT_ALIGN);
    this.slot = { buffer, base, from: this.end - base, fill: this.end - base };
    return this.slot;
  }

  /** The full slot goes to the disk; the next is taken (by take) once the write before it has ended. */
  private async writeFull(full: Slot): Promise<void> {
    const before = this.chain;
    this.slot = null;
    this.queue(full, full.from, full.fill, true);
    await before;
  }

  private async takeThroughCache(pieces: Buffer[]): Promise<void> {
    await this.chain;
    this.throwIfFailed();
    if (this.closed) return;
    await writevAll(this.fd, pieces, this.end, (n) => {
      this.end += n;
      this.written = this.end - this.position;
    });
  }

  /** Writes buffer[from, to) of `slot` after the writes queued before; `giveBack`: the slot is done with after it. */
  private queue(slot: Slot, from: number, to: number, giveBack: boolean): void {
    this.chain = this.chain.then(async () => {
      try {
        if (this.failure) return;
        await this.writeRange(slot.buffer, slot.base, from, to);
      } catch (error) {
        this.failure = { error };
      } finally {
        if (giveBack) this.slots.give(slot.buffer);
      }
    });
  }

  /**
   * buffer[from, to) at file position base + from: the aligned middle direct, the ends through the
   * cache. `written` follows each system call, so a disk that fills midway has counted what it took.
   */
  private async writeRange(buffer: Buffer, base: number, from: number, to: number): Promise<void> {
    const head = Math.min(to, roundUp(from));
    const tail = Math.max(head, to - (to % DIRECT_ALIGN));
    if (head > from) await this.writeAll(this.fd, buffer, from, head, base);
    if (tail > head) {
      const { bytesWritten } = await write(this.directFd, buffer, head, tail - head, base + head);
      this.written = base + head + bytesWritten - this.position;
      // A short direct write (a full disk) ends where it ends; the rest is tried through the cache, which reports the error.
      if (bytesWritten < tail - head) await this.writeAll(this.fd, buffer, head + bytesWritten, tail, base);
    }
    if (to > tail) await this.writeAll(this.fd, buffer, tail, to, base);
    this.written = base + to - this.position;
  }

  private async writeAll(fd: number, buffer: Buffer, from: number, to: number, base: number): Promise<void> {
    for (let at = from; at < to; ) {
      const { bytesWritten } = await write(fd, buffer, at, to - at, base + at);
      // A regular file takes at least one byte or fails; this keeps a broken one from looping for ever.
      if (bytesWritten === 0) throw new Error(`write at ${base + at} took no bytes`);
      at += bytesWritten;
      this.written = base + at - this.position;
    }
  }

  private throwIfFailed(): void {
    if (this.failure) throw this.failure.error;
  }
}

function roundUp(n: number): number {
  return n % DIRECT_ALIGN === 0 ? n : n + DIRECT_ALIGN - (n % DIRECT_ALIGN);
}

/**
 * Writes `pieces` at `position` with as few `writev` calls as the kernel allows, reporting each
 * call's bytes as it returns (so a write that fails midway has counted what it wrote).
 */
async function writevAll(fd: number, pieces: Buffer[], position: number, wrote: (bytes: number) => void): Promise<void> {
  let pending = pieces;
  for (let at = position; pending.length > 0; ) {
    const { bytesWritten: n } = await writev(fd, pending, at);
    at += n;
    wrote(n);
    pending = dropWritten(pending, n);
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
