import type { UploadStore } from '../store/upload-store.ts';
import type { UploadRecord } from '../store/schema.ts';
import { chunkOf, FileUnreadable, writeFileChunks } from '../store/write-chunks.ts';
import { fingerprintOf, sameFile } from '../store/fingerprint.ts';
import { sendLockName, writeLockName, writerAlive, type ChunkBytes } from './chunk-source.ts';
import { isSendable } from './records.ts';
import type { LockManagerLike } from './environment.ts';

export interface LocalCopyDeps {
  store: UploadStore;
  locks: LockManagerLike;
  /** A chunk was written or the upload changed hands. */
  changed(): void;
  /** Storage gave out: the upload carries on from the File in this page's memory. */
  keepInMemory(record: UploadRecord, file: Blob): void;
}

/**
 * The copy of a picked file into IndexedDB (issue 5), one protocol chunk at a time, under the
 * `write:<id>` Web Lock, so a sender in any context can tell "not written yet" from "the page
 * that had the file closed" (issue 11 item 2: then the copy is interrupted).
 */
export class LocalCopy {
  private readonly writers = new Set<Promise<void>>();
  /** Copies running here: the File and the hashes known so far, by upload id. */
  private readonly running = new Map<string, { file: Blob; chunkSize: number; hashes: Map<number, string> }>();

  constructor(private readonly deps: LocalCopyDeps) {}

  /**
   * Holds the write lock from before the record is visible until the copy ends. Resolves once
   * the upload is queued: true when in IndexedDB, false when even its first write failed and
   * it went to memory.
   */
  start(record: UploadRecord, file: Blob): Promise<boolean> {
    return this.underWriteLock(record.id, () => this.deps.store.put(record), record, file).then(
      () => true,
      () => {
        this.deps.keepInMemory(record, file);
        return false;
      },
    );
  }

  /** An interrupted copy goes on from where it stopped, with the file chosen again. */
  continue(record: UploadRecord, file: Blob): Promise<void> {
    const store = this.deps.store;
    return this.underWriteLock(
      record.id,
      async () => {
        const updated = await store.update(record.id, (r) => ({ ...r, state: 'waiting', error: undefined }));
        if (!updated) throw new Error('This upload is no longer queued.');
        record = updated;
      },
      record,
      file,
      () => record,
    );
  }

  /**
   * Issue 11 item 2: copies nobody is writing any more (their write lock is free), and that
   * never finished, wait for their file: nothing is sent for them.
   */
  async markInterrupted(): Promise<void> {
    const store = this.deps.store;
    for (const r of await store.list()) {
      if (r.writeComplete || !isSendable(r) || (await writerAlive(this.deps.locks, r.id))) continue;
      await store.update(r.id, (x) => (x.writeComplete || !isSendable(x) ? x : { ...x, state: 'interrupted' }));
    }
  }

  /** A picked file that is the same as an interrupted copy (of an upload `mine` accepts) continues it. */
  async continueSameFile(file: File, mine: (record: UploadRecord) => boolean): Promise<UploadRecord | null> {
    const store = this.deps.store;
    const candidates = (await store.list()).filter((r) => r.state === 'interrupted' && mine(r) && r.name === file.name && r.size === file.size);
    if (candidates.length === 0) return null;
    const picked = await fingerprintOf(file);
    const match = candidates.find((r) => sameFile(r, picked));
    if (!match) return null;
    await this.continue(match, file);
    return (await store.get(match.id)) ?? null;
  }

  /**
   * A chunk of a copy running in this context, straight from the File, as soon as it is hashed
   * (issue 9: sending does not wait for IndexedDB to store it). Undefined when another context
   * copies it or its hash is not known yet: the sender then reads the stored copy.
   */
  pending(id: string, index: number): ChunkBytes | undefined {
    const copy = this.running.get(id);
    const hash = copy?.hashes.get(index);
    if (!copy || hash === undefined) return undefined;
    return { data: chunkOf(copy.file, index, copy.chunkSize), hash };
  }

  /** Every copy still running, for a clean close. */
  settled(): Promise<unknown> {
    return Promise.allSettled([...this.writers]);
  }

  private underWriteLock(id: string, first: () => Promise<void>, initial: UploadRecord, file: Blob, latest: () => UploadRecord = () => initial): Promise<void> {
    return new Promise<void>((queued, failed) => {
      const writer = this.deps.locks
        .request(writeLockName(id), {}, async () => {
          try {
            await first();
          } catch (error) {
            failed(error);
            return;
          }
          queued();
          const record = latest();
          const copy = { file, chunkSize: record.chunkSize, hashes: new Map<number, string>() };
          this.running.set(id, copy);
          try {
            await writeFileChunks(
              this.deps.store,
              record,
              file,
              () => this.deps.changed(),
              (index, hash) => {
                copy.hashes.set(index, hash);
                this.deps.changed();
              },
            );
            // Finished from the File before the copy ended: what the copy stored is not needed.
            if ((await this.deps.store.get(id))?.state === 'done') await this.deps.store.removeChunks(id);
          } catch (error) {
            // Only storage gives out here (quota, a failing disk): a File that can no longer be
            // read would fail from memory too, and never was "storage is short".
            if (error instanceof FileUnreadable) await this.unreadable(record.id, error.message);
            else await this.takeIntoMemory(record, file);
          } finally {
            if (this.running.get(id) === copy) this.running.delete(id);
          }
        })
        .finally(() => this.writers.delete(writer));
      this.writers.add(writer);
    });
  }

  /** Fails the upload, still under its write lock, so no sender takes it for an interrupted copy meanwhile. */
  private async unreadable(id: string, message: string): Promise<void> {
    await this.deps.store.update(id, (r) => (isSendable(r) ? { ...r, state: 'failed', error: message } : r)).catch(() => undefined);
    this.deps.changed();
  }

  /**
   * Quota or a failing disk mid-copy (issue 5): carry on from the File, honestly marked as not
   * surviving a reload. The sender (maybe another tab) first finishes the request in flight,
   * so no acknowledged byte is sent twice.
   */
  private async takeIntoMemory(record: UploadRecord, file: Blob): Promise<void> {
    const store = this.deps.store;
    const marked = await store.update(record.id, (r) => ({ ...r, detached: true })).catch(() => undefined);
    if (!marked) return; // cancelled meanwhile
    this.deps.changed();
    await this.deps.locks.request(sendLockName(record.id), {}, async () => {
      const latest = (await store.get(record.id)) ?? marked;
      await store.remove(record.id).catch(() => undefined);
      const { detached: _detached, ...rest } = latest;
      this.deps.keepInMemory({ ...rest, state: rest.state === 'uploading' || rest.state === 'offline' ? 'waiting' : rest.state }, file);
    });
    this.deps.changed();
  }
}
