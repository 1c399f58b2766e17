import type { FilesGone } from '../modules/files/files-gone.ts';

/**
 * Issue 9, serving like a static server: what the files host needs to answer for a name, kept
 * in memory so a request for a known file reads no database. Bounded (least recently used goes
 * first) and short-lived. A row never changes under its name (design §8), only its existence
 * does: a delete whose bytes went is seen at once, because the stored object's existence is
 * checked on every request (files-host.ts). A row that went while its bytes stay — a delete the
 * store refused (modules/files/doomed-bytes.ts), an account hidden for removal whose bytes go in
 * batches (users/account-removals.ts) — is dropped here at once when it goes in this process
 * (modules/files/files-gone.ts), and otherwise is trusted for TRUST_MS at most: the next request
 * after that reads the row again, the kept bytes staying with the entry while it names the same
 * object. TRUST_MS is how soon another process stops serving such a file.
 */

/** How long an entry answers without its row being read again: another process's delete is seen within this. */
export const TRUST_MS = 2_000;

export interface FileMeta {
  storageKey: string;
  /** The owner's id: an account hidden for removal takes its files with it. */
  owner: string;
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
  private readonly entries = new Map<string, { meta: FileMeta; expires: number; trustedUntil: number }>();
  private bodyBytes = 0;
  private forgets = 0;

  constructor(
    private readonly capacity = 10_000,
    private readonly ttlMs = 60_000,
    private readonly now: () => number = Date.now,
    /** Memory the kept bodies may use in all. */
    private readonly bodyBudget = 32 * 1024 * 1024,
    private readonly trustMs = TRUST_MS,
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

  /**
   * The entry of `name` while it may answer without its row read again. One past TRUST_MS is not
   * returned but stays, with its bytes, for the `set` that follows the row's new read.
   */
  get(name: string): FileMeta | undefined {
    const entry = this.entries.get(name);
    if (!entry) return undefined;
    const now = this.now();
    if (entry.expires <= now) {
      this.delete(name);
      return undefined;
    }
    if (entry.trustedUntil <= now) return undefined;
    // Re-inserted: a Map iterates in insertion order, so the first key is the least recently used.
    this.entries.delete(name);
    this.entries.set(name, entry);
    return entry.meta;
  }

  /**
   * How many times entries were forgotten so far: a row read before a forget may be the row that
   * just went, so it answers the request that read it but is not kept (files-host.ts lookUp).
   */
  get forgotten(): number {
    return this.forgets;
  }

  /** Keeps `meta`, trusted for TRUST_MS; the bytes kept for the same object stay with it. */
  set(name: string, meta: FileMeta): void {
    const kept = this.entries.get(name)?.meta;
    if (kept?.body && kept.storageKey === meta.storageKey && !meta.body) {
      // Moved, not dropped: the object never changes under its key.
      meta.body = kept.body;
      kept.body = undefined;
    } else {
      this.delete(name);
    }
    this.entries.delete(name);
    const now = this.now();
    this.entries.set(name, { meta, expires: now + this.ttlMs, trustedUntil: now + this.trustMs });
    while (this.entries.size > this.capacity) this.delete(this.entries.keys().next().value as string);
  }

  delete(name: string): void {
    const entry = this.entries.get(name);
    if (!entry) return;
    this.dropBody(entry.meta);
    this.entries.delete(name);
  }

  /** Drops files that went in this process (modules/files/files-gone.ts): by name, or every file of an owner. */
  forget(gone: FilesGone): void {
    this.forgets += 1;
    if ('names' in gone) {
      for (const name of gone.names) this.delete(name);
      return;
    }
    for (const [name, entry] of this.entries) if (entry.meta.owner === gone.owner) this.delete(name);
  }

  private dropBody(meta: FileMeta): void {
    if (meta.body) this.bodyBytes -= meta.body.length;
    meta.body = undefined;
  }

  get size(): number {
    return this.entries.size;
  }
}
