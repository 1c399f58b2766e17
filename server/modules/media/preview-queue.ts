import { buffer } from 'node:stream/consumers';
import crypto from 'node:crypto';
import { Readable } from 'node:stream';
import type { Database } from '../../db/index.ts';
import type { Storage } from '../../storage/storage.ts';
import { OUT_OF_TIME, type MetadataPool } from './metadata-pool.ts';
import { isPreviewable, previewKey, type StoredPreview } from './previews.ts';
import { filesWithoutPreviews, findPreviewSource, recordPreviews } from './previews.repository.ts';
import { doomPreviewKeys, dropPreviewKeys, keepPreviewKeys } from '../files/doomed-bytes.ts';

const BACKFILL_BATCH = 100;

/**
 * Makes each listed image's previews once, off the request path (issue 11 item 9): a file id
 * is queued when it is listed, and files listed before a restart are found by `backfill()`.
 * One file at a time: the work runs in its own reader process (metadata-pool.ts), bounded in
 * time and memory like every other parser of uploaded bytes. The outcome, even "none" (not an
 * image, refused as a bomb, broken), is recorded in `files.previews`, so nothing is tried twice;
 * a store or database that fails meanwhile is no outcome, and leaves the row for the next backfill.
 */
export class PreviewQueue {
  private readonly pending: string[] = [];
  private readonly queued = new Set<string>();
  private running: Promise<void> | null = null;
  private backfilling: Promise<void> | null = null;
  private closed = false;

  constructor(
    private readonly db: Database,
    private readonly storage: Storage,
    private readonly pool: MetadataPool,
    private readonly log: (message: string) => void,
  ) {}

  enqueue(fileId: string): void {
    if (this.closed || this.queued.has(fileId)) return;
    this.queued.add(fileId);
    this.pending.push(fileId);
    this.start();
  }

  private start(): void {
    this.running ??= this.drain().finally(() => {
      this.running = null;
      // Queued after the loop found nothing left but before this: without a new run it would wait
      // for the next upload (or the next backfill) to be taken up.
      if (this.pending.length > 0 && !this.closed) this.start();
    });
  }

  /**
   * Queues every image listed without a preview record (files from before this feature, a crash,
   * a store or database that failed while they were made). One pass at a time: a pass through a
   * large backlog may outlast the period after which jobs.ts asks again.
   */
  backfill(): Promise<void> {
    this.backfilling ??= this.backfillPass().finally(() => (this.backfilling = null));
    return this.backfilling;
  }

  private async backfillPass(): Promise<void> {
    let after = '';
    while (!this.closed) {
      const ids = await filesWithoutPreviews(this.db, after, BACKFILL_BATCH);
      for (const id of ids) this.enqueue(id);
      if (ids.length < BACKFILL_BATCH) return;
      after = ids[ids.length - 1] as string;
      // Let the queue work through a batch before loading the next.
      await this.idle();
    }
  }

  /** Resolves once nothing is queued or running. */
  async idle(): Promise<void> {
    while (this.running) await this.running;
  }

  async close(): Promise<void> {
    this.closed = true;
    this.pending.length = 0;
    await this.idle();
    // A pass stops at its next batch; awaited so its query does not meet a closed database.
    await this.backfilling?.catch(() => {});
  }

  private async drain(): Promise<void> {
    for (let id = this.pending.shift(); id !== undefined && !this.closed; id = this.pending.shift()) {
      try {
        await this.make(id);
      } catch (err) {
        this.log(`previews of file ${id} failed: ${(err as Error).message}`);
      } finally {
        this.queued.delete(id);
      }
    }
  }

  private async make(id: string): Promise<void> {
    const file = await findPreviewSource(this.db, id);
    if (!file || file.previews !== null) return;
    let readFailure: unknown = null;
    const read = (start: number, end: number) => {
      // A key the store refuses outright (storage.ts: a malformed one) throws here, at once, and is
      // no failure of the store: that file can never be read, and is recorded as having none.
      const bytes = this.storage.read(file.storage_key, { start, end: end - 1 });
      return buffer(bytes).catch((err: unknown) => {
        readFailure ??= err;
        throw err;
      });
    };
    const outcome = isPreviewable(file.mime_type, file.size) ? await this.pool.previews(file.size, read) : null;
    // Shutting down: the readers were ended, so null says nothing about the image. The row stays
    // without a record and the next start's backfill makes its previews.
    if (this.closed) return;
    // The reader never saw the whole image because the store failed a read (S3 throttling, a
    // dropped connection), or its deadline (PREVIEW_LIMITS' total) passed before the image had
    // used its CPU budget: the store answered slowly, or the machine was too busy to give the
    // reader (at READER_NICE) a core. "None" would be recorded for good, so a photo would never get
    // its previews. The row stays without a record for the next backfill (jobs.ts), unless the
    // object is gone. An image past its CPU budget is its own doing, recorded as none.
    const why = readFailure !== null ? `the store failed a read (${String(readFailure)})` : outcome === OUT_OF_TIME ? 'the reader ran out of time waiting for the store or a core' : null;
    if (why !== null && (await this.mayStillBeStored(file.storage_key))) throw new Error(`${why}; they are made on a later pass`);
    const rendered = outcome === OUT_OF_TIME ? null : outcome;
    const tag = crypto.randomBytes(4).toString('base64url');
    const previews: StoredPreview[] = (rendered ?? []).map((p) => ({ width: p.width, height: p.height, bytes: p.data.length, suffix: `p${p.width}_${tag}` }));
    const keys = previews.map((p) => previewKey(file.storage_key, p));
    // Listed before a byte is written, and unlisted only by the transaction that records them: a
    // crash, a record that loses or fails, or a store that refuses the cleanup below leaves them
    // listed, and the reclaim (files/doomed-bytes.ts) deletes them once they are due.
    await doomPreviewKeys(this.db, keys);
    let recorded: boolean;
    try {
      for (const [i, p] of (rendered ?? []).entries()) {
        const key = keys[i] as string;
        await this.storage.writeAt(key, 0, Readable.from([Buffer.from(p.data.buffer, p.data.byteOffset, p.data.length)]));
        await this.storage.finalize(key, p.data.length);
      }
      const column = JSON.stringify(previews);
      recorded = keys.length === 0 ? await recordPreviews(this.db, id, column) : await this.db.transaction().execute(async (trx) => {
        if (!(await recordPreviews(trx, id, column))) return false;
        // Taken by a pass meanwhile (past their time): their objects may be gone, so nothing is recorded.
        if (!(await keepPreviewKeys(trx, keys))) throw new Error('its preview keys were reclaimed before they were recorded');
        return true;
      });
    } catch (err) {
      await this.drop(keys);
      throw err;
    }
    // The file was deleted (or given previews elsewhere) while these were made.
    if (!recorded) await this.drop(keys);
  }

  /** Whether the object may still be there: it is, or the store cannot tell right now (storage.ts). */
  private async mayStillBeStored(storageKey: string): Promise<boolean> {
    return (await this.storage.stat(storageKey).catch(() => undefined)) !== null;
  }

  /** Its own keys, now: a store that refuses leaves them listed for the periodic reclaim (jobs.ts). */
  private async drop(keys: string[]): Promise<void> {
    await dropPreviewKeys({ db: this.db, storage: this.storage }, keys).catch(() => {});
  }
}
