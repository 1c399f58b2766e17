/**
 * Page-aligned write buffers for direct writes (server/storage/sink-writers.ts). `O_DIRECT`
 * refuses memory that is not aligned to the device's DMA alignment, and nothing Node allocates
 * for a Buffer is (glibc hands large blocks out 16 bytes into a mapping). A WebAssembly memory
 * is mapped by V8 on its own, page-aligned, and so is each slot cut from one; the
 * storage's first direct write checks that before any upload relies on it (`probeDirectWrites`).
 */

/**
 * One slot per direct write; a writer holds two (one filling, one being written). 1 MiB slots in
 * 8 MiB arenas had put 28 MiB on the peak of 8 × 1 GiB uploads at once (149 MiB against 121);
 * 512 KiB ingests as fast (alternated rounds), 256 KiB did not (bench/README.md).
 */
export const SLOT_BYTES = 512 * 1024;
const SLOTS_PER_ARENA = 8;
/**
 * Slots the process lends at once: 32 MiB, two for each of 32 uploads streaming at full speed
 * (more than two cores can feed). Past it writes go through the page cache, so thousands of
 * uploads trickling at the slowest body rate the server accepts hold no more memory than they
 * did before direct writes (a slot per connection would have been 512 KiB for a few bytes).
 */
export const MAX_SLOTS = 64;
/** A WebAssembly page. */
const WASM_PAGE = 64 * 1024;

interface Arena {
  free: Buffer[];
  inUse: number;
}

/**
 * Slots are taken from 4 MiB arenas. An arena whose slots have all come back is dropped (V8
 * unmaps it once collected) while another free one is kept, so a burst of uploads does not
 * leave its buffers resident for good (issue 9: idle and peak memory).
 */
export class AlignedSlots {
  private readonly arenas: Arena[] = [];
  private readonly owner = new WeakMap<Buffer, Arena>();
  private lent = 0;

  constructor(private readonly maxSlots = MAX_SLOTS) {}

  /** A slot of SLOT_BYTES, or null when all are lent or no more memory can be mapped (the caller writes through the page cache). */
  take(): Buffer | null {
    if (this.lent >= this.maxSlots) return null;
    let arena = this.arenas.find((a) => a.free.length > 0);
    if (!arena) {
      try {
        arena = newArena();
      } catch {
        // V8 caps the address space its WebAssembly memories reserve: past it, no direct writes.
        return null;
      }
      for (const slot of arena.free) this.owner.set(slot, arena);
      this.arenas.push(arena);
    }
    arena.inUse += 1;
    this.lent += 1;
    return arena.free.pop()!;
  }

  /** Hands a slot back; only once nothing (no write under way) reads it any more. */
  give(slot: Buffer): void {
    const arena = this.owner.get(slot);
    if (!arena) return;
    arena.free.push(slot);
    arena.inUse -= 1;
    this.lent -= 1;
    if (arena.inUse === 0 && this.arenas.some((a) => a !== arena && a.inUse === 0)) {
      this.arenas.splice(this.arenas.indexOf(arena), 1);
    }
  }

  /** Slots lent and not yet given back. */
  get inUse(): number {
    return this.lent;
  }

  /** Arenas mapped now (tests: a burst's buffers are given back). */
  get arenaCount(): number {
    return this.arenas.length;
  }
}

function newArena(): Arena {
  const pages = (SLOT_BYTES * SLOTS_PER_ARENA) / WASM_PAGE;
  const memory = new WebAssembly.Memory({ initial: pages, maximum: pages });
  const free: Buffer[] = [];
  for (let i = 0; i < SLOTS_PER_ARENA; i++) free.push(Buffer.from(memory.buffer, i * SLOT_BYTES, SLOT_BYTES));
  return { free, inUse: 0 };
}

/** The process's slots: shared by every upload's writer. */
export const alignedSlots = new AlignedSlots();
