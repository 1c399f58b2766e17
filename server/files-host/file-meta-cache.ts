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
}

export class FileMetaCache {
  private readonly entries = new Map<string, { meta: FileMeta; expires: number }>();

  constructor(
    private readonly capacity = 10_000,
    private readonly ttlMs = 60_000,
    private readonly now: () => number = Date.now,
  ) {}

  get(name: string): FileMeta | undefined {
    const entry = this.entries.get(name);
    if (!entry) return undefined;
    this.entries.delete(name);
    if (entry.expires <= this.now()) return undefined;
    // Re-inserted: a Map iterates in insertion order, so the first key is the least recently used.
    this.entries.set(name, entry);
    return entry.meta;
  }

  set(name: string, meta: FileMeta): void {
    this.entries.delete(name);
    this.entries.set(name, { meta, expires: this.now() + this.ttlMs });
    while (this.entries.size > this.capacity) this.entries.delete(this.entries.keys().next().value as string);
  }

  delete(name: string): void {
    this.entries.delete(name);
  }

  get size(): number {
    return this.entries.size;
  }
}
