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
 * The slots of a writer that starts while no other is under way (LARGE_WRITERS). One direct
 * write is under way per writer, so a lone upload goes at one write's size per disk round trip:
 * on a host whose `dd oflag=direct` made 644 MB/s at 512 KiB and 769 at 2 MiB, a lone upload
 * written past the page cache ingested 238–290 MiB/s in 512 KiB slots and 348–407 in 2 MiB
 * ones, alternated rounds (bench/README.md, 2026-12-06). Many uploads at once keep the disk busy
 * with small writes: a writer takes large slots only when no other is under way, so a crowd's
 * memory stays what it was (the 4 MiB of large slots of a burst's first writer at most), and
 * none are kept once uploads have ended.
 */
export const LARGE_SLOT_BYTES = 2 * 1024 * 1024;
export const LARGE_WRITERS = 1;
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
 * Slots are taken from arenas (4 MiB of 512 KiB slots). An arena whose slots have all come back
 * is dropped (V8 unmaps it once collected) while another free one is kept, so a burst
 * of uploads does not leave its buffers resident for good (issue 9: idle and peak memory).
 */
export class AlignedSlots {
  private readonly arenas: Arena[] = [];
  private readonly owner = new WeakMap<Buffer, Arena>();
  private lent = 0;

  constructor(
    private readonly maxSlots = MAX_SLOTS,
    readonly slotBytes = SLOT_BYTES,
    private readonly slotsPerArena = SLOTS_PER_ARENA,
  ) {}

  /** A slot of `slotBytes`, or null when all are lent or no more memory can be mapped (the caller writes through the page cache). */
  take(): Buffer | null {
    if (this.lent >= this.maxSlots) return null;
    let arena = this.arenas.find((a) => a.free.length > 0);
    if (!arena) {
      try {
        arena = newArena(this.slotBytes, this.slotsPerArena);
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

  /** Drops every arena none of whose slots is lent: nothing is kept for a next burst. */
  trim(): void {
    for (const arena of this.arenas.filter((a) => a.inUse === 0)) this.arenas.splice(this.arenas.indexOf(arena), 1);
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

function newArena(slotBytes: number, slots: number): Arena {
  const pages = (slotBytes * slots) / WASM_PAGE;
  const memory = new WebAssembly.Memory({ initial: pages, maximum: pages });
  const free: Buffer[] = [];
  for (let i = 0; i < slots; i++) free.push(Buffer.from(memory.buffer, i * slotBytes, slotBytes));
  return { free, inUse: 0 };
}

/** The process's slots: shared by every upload's writer. */
export const alignedSlots = new AlignedSlots();
/** The large slots: two per writer, an arena (4 MiB) per writer, let go once no writer holds them. */
export const largeAlignedSlots = new AlignedSlots(2 * LARGE_WRITERS, LARGE_SLOT_BYTES, 2);
/** Direct writers under way, and how many of them hold the large slots. */
let writers = 0;
let largeWriters = 0;

/**
 * The pool a new direct writer fills its slots from: the large one while fewer than
 * LARGE_WRITERS writers are under way at all, so a crowd of uploads writes in small slots as
 * before even as its first writers end. `release` once the writer's last write has ended.
 */
export function slotsForWriter(): { slots: AlignedSlots; release: () => void } {
  const large = writers < LARGE_WRITERS;
  writers += 1;
  if (large) largeWriters += 1;
  let released = false;
  return {
    slots: large ? largeAlignedSlots : alignedSlots,
    release: () => {
      if (released) return;
      released = true;
      writers -= 1;
      if (!large) return;
      largeWriters -= 1;
      // The writer's slots are back (release follows its last write); an upload's end leaves none resident.
      if (largeWriters === 0) largeAlignedSlots.trim();
    },
  };
}
