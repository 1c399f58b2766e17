/**
 * Issue 9, serving like a static server: what the files host needs to answer for a name, kept
 * in memory so a request for a known file reads no database. Bounded (least recently used goes
 * first) and short-lived: a row never changes under its name (design §8), only its existence
 * does, and that is checked against the store on every request (files-host.ts), so a delete in
 * this or any other process is seen at once; the lifetime only bounds how long an entry can
 * outlive a row whose bytes somehow remain.
 */
export interface FileMeta {
  storageKey: string;
  size: number;
  timeCreated: number;
  etag: string;
  /** The design §8 headers of a 200, built once. */
  headers: Record<string, string>;
  /** The same with the whole file's `Content-Length`: a 200's headers as they go out. */
  headers200: Record<string, string>;
  /** A small file's bytes (≤ SMALL_BODY), once read: its object never changes under its key. */
  body?: Buffer;
}

/** Files up to this size are kept whole in memory (4 kB requests then cost one `access`, not an open, reads and a close). */
export const SMALL_BODY = 64 * 1024;

export class FileMetaCache {
  private readonly entries = new Map<string, { meta: FileMeta; expires: number }>();
  private bodyBytes = 0;

  constructor(
    private readonly capacity = 10_000,
    private readonly ttlMs = 60_000,
    private readonly now: () => number = Date.now,
    /** Memory the kept bodies may use in all. */
    private readonly bodyBudget = 32 * 1024 * 1024,
  ) {}

  /** Keeps `body` with the entry of `name` when it is small and the budget allows. */
  keepBody(name: string, body: Buffer): void {
    if (!this.wouldKeep(body.length)) return;
    const entry = this.entries.get(name);
    if (!entry || entry.meta.body) return;
    entry.meta.body = body;
    this.bodyBytes += body.length;
  }

  /**
   * Whether keepBody would keep a body of `size` bytes now (SMALL_BODY and the budget allowing).
   * Entries past their lifetime at the least recently used end are dropped first to make room:
   * only a request for their name would have dropped them, so the bodies of files nobody asks
   * for any more held the budget, and a burst of small files kept every file after it on disk.
   */
  wouldKeep(size: number): boolean {
    if (size > SMALL_BODY) return false;
    const now = this.now();
    for (const [name, entry] of this.entries) {
      if (this.bodyBytes + size <= this.bodyBudget || entry.expires > now) break;
      this.delete(name);
    }
    return this.bodyBytes + size <= this.bodyBudget;
  }

  get keptBodyBytes(): number {
    return this.bodyBytes;
  }

  get(name: string): FileMeta | undefined {
    const entry = this.entries.get(name);
    if (!entry) return undefined;
    this.entries.delete(name);
    if (entry.expires <= this.now()) {
      this.dropBody(entry.meta);
      return undefined;
    }
    // Re-inserted: a Map iterates in insertion order, so the first key is the least recently used.
    this.entries.set(name, entry);
    return entry.meta;
  }

  set(name: string, meta: FileMeta): void {
    this.delete(name);
    this.entries.set(name, { meta, expires: this.now() + this.ttlMs });
    while (this.entries.size > this.capacity) this.delete(this.entries.keys().next().value as string);
  }

  delete(name: string): void {
    const entry = this.entries.get(name);
    if (!entry) return;
    this.dropBody(entry.meta);
    this.entries.delete(name);
  }

  private dropBody(meta: FileMeta): void {
    if (meta.body) this.bodyBytes -= meta.body.length;
    meta.body = undefined;
  }

  get size(): number {
    return this.entries.size;
  }
}
