import type { UploadItem } from '../uploader.ts';
import type { UploadStore } from '../store/upload-store.ts';
import type { UploadRecord } from '../store/schema.ts';
import { newUploadRecord } from '../store/write-chunks.ts';
import { fingerprintOf, sameFile } from '../store/fingerprint.ts';
import type { BackoffOptions } from './backoff.ts';
import { sendLockName, storeSource, writerAlive, type ChunkSource } from './chunk-source.ts';
import type { ChangeChannel, LockManagerLike, NetworkSignal, StorageEstimator } from './environment.ts';
import { LocalCopy } from './local-copy.ts';
import { ownedBy, type QueueAuth } from './owner.ts';
import { ProgressView } from './progress.ts';
import { RecordBook } from './record-book.ts';
import { CANCEL_UNDO_MS, CANCELLED_TOO_LATE, isSendable, toItem } from './records.ts';
import { CancelTimers } from './cancel-timers.ts';
import { cancelOnServer } from './cancel-upload.ts';
import { runUpload, type RunDeps } from './run-upload.ts';
import { hasRoomFor } from './storage-room.ts';
import type { Transport } from './transport.ts';
import { Wakeups } from './wakeups.ts';

export type { QueueAuth } from './owner.ts';

export interface QueueDeps {
  /** null when IndexedDB could not be opened: everything stays in memory. */
  store: UploadStore | null;
  transport: Transport;
  locks: LockManagerLike;
  network: NetworkSignal;
  channel: ChangeChannel;
  auth: () => Promise<QueueAuth>;
  chunkSize: number;
  storage?: StorageEstimator;
  backoff?: BackoffOptions;
  random?: () => number;
  /** How long to wait for news before looking at the store again (other contexts may be silent). */
  pollMs?: number;
  /** Give up on a chunk the server keeps refusing as corrupt after this many tries. */
  maxChecksumRetries?: number;
  /** Files sent at the same time (issue 11 item 3); each file's chunks still go in order. */
  parallel?: number;
  /** Files larger than this go one at a time (LARGE_FILE_BYTES). */
  largeFileBytes?: number;
  /** How long a cancel can be undone. */
  undoMs?: number;
  onFinished?: (item: UploadItem) => void;
}

/** One global lock: whoever holds it sends the stored queue, so two tabs never send the same bytes. */
export const SENDER_LOCK = 'stash-upload-sender';
export const PARALLEL_UPLOADS = 3;
/**
 * Files over this size are sent one at a time, beside up to two smaller ones. The server counts
 * what a user's unfinished uploads hold against max unfinished upload size (design §6: 2,048 MB
 * by default, a chunk on its way counted whole), and three 1 GB videos sent together each
 * reached ~640 MB when the next chunk of every one was refused (413, final): all three failed,
 * and a retry was refused again, since their bytes still counted. At the default limits one
 * largest file (1,024 MB, 1,040 counted by chunks) and two below this (400 MB each) fit.
 */
export const LARGE_FILE_BYTES = 400 * 1024 * 1024;

const isAbort = (error: unknown) => error instanceof DOMException && error.name === 'AbortError';

interface Job {
  record: UploadRecord;
  source: ChunkSource;
}

/**
 * The upload queue (issues 5 and 11): persisted uploads are copied into IndexedDB and sent by
 * whichever context holds SENDER_LOCK; when storage is short they are sent straight from the
 * File by the page that has it. Up to three files go at once. Every upload belongs to the user
 * who queued it: only they see it and it is sent only with their token. This class holds the
 * public operations and the scheduling; one upload's attempts are run-upload.ts, one attempt
 * is sender.ts, the local copy is local-copy.ts.
 */
export class UploadQueue {
  private readonly book: RecordBook;
  private readonly active = new Map<string, AbortController>();
  /** Uploads being sent by this context (stored and in-memory together share the limit). */
  private readonly running = new Set<string>();
  /** Those of them over LARGE_FILE_BYTES: at most one. */
  private readonly runningLarge = new Set<string>();
  private readonly progress: ProgressView;
  private readonly cancels: CancelTimers;
  private readonly listeners = new Set<(items: UploadItem[]) => void>();
  private readonly wakeups: Wakeups;
  private readonly unsubscribe: (() => void)[] = [];
  private readonly closing = new AbortController();
  private readonly loops: Promise<void>[] = [];
  private readonly copy: LocalCopy | null;
  private readonly runDeps: RunDeps;
  /** Cancelled uploads whose undo window ended, being dropped on the server: no longer shown nor undone. */
  private readonly dropping = new Set<string>();

  constructor(private readonly deps: QueueDeps) {
    this.wakeups = new Wakeups(deps.pollMs ?? 2000);
    this.book = new RecordBook(deps.store, () => this.changed(true));
    this.progress = new ProgressView(() => void this.emit());
    this.cancels = new CancelTimers(deps.undoMs ?? CANCEL_UNDO_MS, async (id) => {
      if ((await this.book.get(id))?.state === 'cancelled') await this.dropNow(id, await this.deps.auth());
    });
    this.copy = deps.store
      ? new LocalCopy({ store: deps.store, locks: deps.locks, changed: () => this.changed(true), keepInMemory: (r, f) => this.book.keepInMemory(r, f) })
      : null;
    this.runDeps = {
      ...deps,
      book: this.book,
      wakeups: this.wakeups,
      progress: this.progress,
      refused: { token: null },
      acknowledged: (id, bytes, url) => this.acknowledged(id, bytes, url),
    };
  }

  /** Starts sending: resumes whatever the store holds (after a reload, a restart, a share). */
  start(): void {
    this.unsubscribe.push(this.deps.channel.subscribe(() => this.changed(false)));
    this.unsubscribe.push(
      this.deps.network.subscribe((online) => {
        if (online) this.wake();
        else this.changed(false);
      }),
    );
    if (this.deps.store) {
      const signal = this.closing.signal;
      // Issue 11 item 2: a copy cut off by a reload is known at once, before anything is sent.
      void this.copy!.markInterrupted().then(() => this.changed(true));
      void this.expireCancelled();
      this.loops.push(
        this.deps.locks
          .request(SENDER_LOCK, { signal }, () => this.sendLoop(() => this.nextStored()))
          .catch((error: unknown) => {
            if (!isAbort(error)) throw error;
          }),
      );
    }
    this.loops.push(this.sendLoop(() => this.nextInMemory()));
    void this.emit();
  }

  /** Lets go of the lock and stops sending (a closing tab); stored uploads stay for the next one. */
  async close(): Promise<void> {
    this.closing.abort();
    for (const controller of this.active.values()) controller.abort();
    this.cancels.clearAll();
    this.wake();
    await Promise.allSettled([...this.loops, this.copy?.settled()]);
    for (const off of this.unsubscribe) off();
  }

  subscribe(listener: (items: UploadItem[]) => void): () => void {
    this.listeners.add(listener);
    void this.list().then((items) => this.listeners.has(listener) && listener(items));
    return () => this.listeners.delete(listener);
  }

  /** The signed-in user's uploads only (issue 11 item 1); nobody signed in sees none. */
  async list(): Promise<UploadItem[]> {
    const auth = await this.deps.auth();
    // A session the server refused: what waits for it waits for a sign-in, which the page asks for.
    const refused = auth.token !== null && auth.token === this.runDeps.refused.token;
    const items = (await this.book.all())
      .filter(({ record }) => ownedBy(record, auth) && !this.dropping.has(record.id))
      .map(({ record, persistent }) => this.progress.apply(toItem(record, persistent)))
      .map((item) => (refused && item.state === 'waiting' ? { ...item, signInAgain: true } : item));
    return items.sort((a, b) => a.createdAt - b.createdAt || a.id.localeCompare(b.id));
  }

  /**
   * Queues files for the signed-in user. Storage honesty (issue 5): when the estimate says they
   * will not fit, or IndexedDB is missing, they are sent from memory and marked not persistent.
   * A file that is the same as an interrupted copy continues that upload (issue 11 item 2).
   */
  async enqueue(files: File[]): Promise<UploadItem[]> {
    const auth = await this.deps.auth();
    if (!auth.owner) throw new Error('Sign in to upload files.');
    const queued: UploadItem[] = [];
    const fresh: File[] = [];
    for (const file of files) {
      const resumed = this.copy ? await this.copy.continueSameFile(file, (r) => ownedBy(r, auth)) : null;
      if (resumed) queued.push(toItem(resumed, true));
      else fresh.push(file);
    }
    const persistent = this.copy !== null && (await hasRoomFor(this.deps.storage, fresh.reduce((sum, f) => sum + f.size, 0)));
    for (const file of fresh) {
      const record: UploadRecord = { ...newUploadRecord(file, this.deps.chunkSize, 'page', auth.owner), ...(await fingerprintOf(file)) };
      let kept = false;
      if (persistent) kept = await this.copy!.start(record, file);
      else this.book.keepInMemory(record, file);
      queued.push(toItem(record, kept));
    }
    this.changed(true);
    return queued;
  }

  /** Issue 11 item 2: the user chose the file of an interrupted upload again. */
  async chooseAgain(id: string, file: File): Promise<void> {
    const auth = await this.deps.auth();
    const record = await this.deps.store?.get(id);
    if (!record || !ownedBy(record, auth) || record.state !== 'interrupted') throw new Error('This upload is not waiting for its file.');
    if (!sameFile(record, await fingerprintOf(file))) throw new Error(`That is not the same file. Choose ${record.name} (${record.size} bytes) again.`);
    await this.copy!.continue(record, file);
    this.changed(true);
  }

  async pause(id: string): Promise<void> {
    await this.book.update(id, (r) => (isSendable(r) ? { ...r, state: 'paused' } : r));
    this.active.get(id)?.abort();
  }

  async resume(id: string): Promise<void> {
    await this.book.update(id, (r) => (r.state === 'paused' ? { ...r, state: 'waiting' } : r));
    this.wake();
  }

  async retry(id: string): Promise<void> {
    await this.book.update(id, (r) => (r.state === 'failed' ? { ...r, state: 'waiting', error: undefined } : r));
    this.wake();
  }

  /**
   * Issue 11 item 4: stops at once and says 'cancelled'; only after `undoMs` is the upload
   * dropped here and on the server. Until then undoCancel brings it back as it was.
   */
  async cancel(id: string): Promise<void> {
    const cancelledAt = Date.now();
    await this.book.update(id, (r) => (r.state === 'cancelled' || r.state === 'done' ? r : { ...r, state: 'cancelled', beforeCancel: r.state, cancelledAt }));
    this.active.get(id)?.abort();
    this.cancels.schedule(id, cancelledAt);
  }

  async undoCancel(id: string): Promise<void> {
    if (this.dropping.has(id)) return;
    this.cancels.clear(id);
    await this.book.update(id, (r) => {
      if (r.state !== 'cancelled') return r;
      const { beforeCancel, cancelledAt: _at, ...rest } = r;
      return { ...rest, state: beforeCancel === 'uploading' || beforeCancel === 'offline' || !beforeCancel ? 'waiting' : beforeCancel };
    });
    this.wake();
  }

  /**
   * The signed-in user leaves (issue 11 item 1). Their uploads stay in the store for their next
   * sign-in unless `keep` is false; either way this context stops sending them now.
   */
  async signOut(keep: boolean): Promise<void> {
    const auth = await this.deps.auth();
    // What this token filed under its own key is its user's. enqueue reads the owner before it
    // writes the record, so a file picked while the server was naming the user can be written
    // under the key after the hand-over (adoptOwner) looked; the alias shows it while the token
    // lasts, and once the token is gone nobody could claim it again.
    if (auth.alias && auth.owner && auth.alias !== auth.owner) await this.adoptOwner(auth.alias, auth.owner);
    if (!keep) for (const item of await this.list()) await this.dropNow(item.id, auth);
    for (const controller of this.active.values()) controller.abort();
    this.changed(true);
  }

  async clearFinished(): Promise<void> {
    const auth = await this.deps.auth();
    for (const { record } of await this.book.all()) if (record.state === 'done' && ownedBy(record, auth)) await this.book.remove(record.id);
    this.changed(true);
  }

  /**
   * Uploads queued before the owner's id was known (offline: `token:<hash>`), or before owners
   * existed (none), now belong to the user the server named.
   */
  async adoptOwner(from: string | undefined, to: string): Promise<void> {
    for (const { record } of await this.book.all()) if (record.owner === from) await this.book.update(record.id, (x) => (x.owner === from ? { ...x, owner: to } : x));
    this.changed(true);
  }

  /** Cuts any wait short (online again, Background Sync, the page came back, a new token). */
  wake(): void {
    this.wakeups.wakeAll();
    void this.abortForeign();
  }

  /** A cancel left in the store by a closed page is carried out by whoever starts next. */
  private async expireCancelled(): Promise<void> {
    for (const { record } of await this.book.all()) if (record.state === 'cancelled') this.cancels.schedule(record.id, record.cancelledAt ?? 0);
  }

  /**
   * Drops a cancelled upload here and on the server (design §7 `files/upload/cancel`). A cancel
   * that came too late (the last chunk was listed meanwhile) deletes the file it became; the
   * row goes only once the server has answered, so a page closed meanwhile leaves the cancel
   * to the next start. If the file cannot be deleted the row says so, done, with its link.
   */
  private async dropNow(id: string, auth: QueueAuth): Promise<void> {
    const record = await this.book.get(id);
    this.active.get(id)?.abort();
    if (!record || !ownedBy(record, auth) || !auth.token) {
      await this.forget(id);
      return;
    }
    if (record.state !== 'cancelled') {
      // Sign-out dropping what is left: only the unfinished upload goes, never a file (done is kept online).
      await this.forget(id);
      if (record.state === 'done') return;
      await this.deps.transport
        .postJson(`${auth.apiUrl}/api/v1/files/upload/cancel`, { token: auth.token, uploadId: id }, AbortSignal.timeout(10_000))
        .catch(() => undefined);
      return;
    }
    this.dropping.add(id);
    try {
      void this.emit();
      const signal = this.closing.signal;
      const outcome = await cancelOnServer({ transport: this.deps.transport, sleep: (ms) => this.wakeups.sleep(ms, signal), signal }, { ...auth, token: auth.token }, id);
      if (outcome.kind === 'finishing') {
        // Still being listed: asked again later here, or by the next start (expireCancelled).
        if (!signal.aborted) this.cancels.schedule(id, Date.now());
        return;
      }
      if (outcome.kind === 'dropped') {
        await this.forget(id);
        return;
      }
      await this.book.update(id, (r) => {
        if (r.state !== 'cancelled') return r;
        const { beforeCancel: _before, cancelledAt: _at, ...rest } = r;
        return { ...rest, state: 'done', url: outcome.url, ackedBytes: r.size, notice: CANCELLED_TOO_LATE };
      });
      await this.deps.store?.removeChunks(id).catch(() => undefined);
    } finally {
      this.dropping.delete(id);
      void this.emit();
    }
  }

  private async forget(id: string): Promise<void> {
    await this.book.remove(id);
    this.progress.forget(id);
  }

  /** The signed-in user's next stored upload nobody here is sending; interrupted copies are left alone. */
  private async nextStored(): Promise<Job | null> {
    const store = this.deps.store!;
    const auth = await this.deps.auth();
    for (const record of await store.list()) {
      if (!isSendable(record) || this.running.has(record.id) || !ownedBy(record, auth) || this.waitsForLarge(record)) continue;
      if (!record.writeComplete && !(await writerAlive(this.deps.locks, record.id))) {
        // Issue 11 item 2: nothing is sent for a copy cut off by a reload.
        await this.copy!.markInterrupted();
        this.changed(true);
        continue;
      }
      const id = record.id;
      return { record, source: storeSource(store, id, this.deps.locks, (signal) => this.wakeups.change(signal), (index) => this.copy?.pending(id, index)) };
    }
    return null;
  }

  private async nextInMemory(): Promise<Job | null> {
    const auth = await this.deps.auth();
    const m = [...this.book.memory.values()].find((u) => isSendable(u.record) && !this.running.has(u.record.id) && ownedBy(u.record, auth) && !this.waitsForLarge(u.record));
    return m ? { record: m.record, source: m.source } : null;
  }

  /** A large file waits while another large one is being sent (LARGE_FILE_BYTES). */
  private waitsForLarge(record: UploadRecord): boolean {
    return this.runningLarge.size > 0 && record.size > (this.deps.largeFileBytes ?? LARGE_FILE_BYTES);
  }

  /** Starts up to `parallel` uploads (issue 11 item 3), each under its own send lock. */
  private async sendLoop(next: () => Promise<Job | null>): Promise<void> {
    const mine = new Set<Promise<void>>();
    while (!this.closing.signal.aborted) {
      const job = this.running.size < (this.deps.parallel ?? PARALLEL_UPLOADS) ? await next() : null;
      // Closed while the next job was looked for: the upload it found may be one close() just
      // stopped, and a run started now would never hear the close.
      if (this.closing.signal.aborted) break;
      if (!job) {
        await this.wakeups.change(this.closing.signal).catch(() => undefined);
        continue;
      }
      const id = job.record.id;
      this.running.add(id);
      if (job.record.size > (this.deps.largeFileBytes ?? LARGE_FILE_BYTES)) this.runningLarge.add(id);
      const run = this.deps.locks
        .request(sendLockName(id), {}, () => this.runLocked(id, job.source))
        .catch(() => undefined)
        .finally(() => {
          this.running.delete(id);
          this.runningLarge.delete(id);
          mine.delete(run);
          this.wakeups.notify();
        });
      mine.add(run);
    }
    await Promise.allSettled([...mine]);
  }

  private async runLocked(id: string, source: ChunkSource): Promise<void> {
    const controller = new AbortController();
    const abortOnClose = () => controller.abort();
    this.closing.signal.addEventListener('abort', abortOnClose);
    // Closed while this waited for its send lock: the listener above would never hear it.
    if (this.closing.signal.aborted) controller.abort();
    this.active.set(id, controller);
    try {
      await runUpload(id, source, controller.signal, this.runDeps);
    } finally {
      this.progress.settled(id);
      this.active.delete(id);
      this.closing.signal.removeEventListener('abort', abortOnClose);
    }
  }

  private async acknowledged(id: string, bytes: number, url?: string): Promise<void> {
    this.progress.settled(id);
    const updated = await this.book.update(id, (r) => {
      if (url === undefined) return { ...r, ackedBytes: bytes };
      const { notice: _notice, ...rest } = r; // a retry's reason is over once the link is here
      return { ...rest, ackedBytes: bytes, state: 'done', url };
    });
    if (url === undefined || !updated) return;
    // Sent from the File ahead of the copy, a chunk may have been stored after the server had it.
    await this.deps.store?.removeChunks(id).catch(() => undefined);
    this.deps.onFinished?.(toItem(updated, !this.book.isInMemory(id)));
  }

  /** Something changed here (broadcast = true) or elsewhere: refresh listeners, stop what was paused or removed. */
  private changed(broadcast: boolean): void {
    if (broadcast) this.deps.channel.post();
    this.wakeups.notify();
    void this.emit();
    void this.abortForeign();
  }

  /** Stops sending what was paused, cancelled or removed, or is no longer the signed-in user's. */
  private async abortForeign(): Promise<void> {
    if (this.active.size === 0) return;
    const auth = await this.deps.auth();
    for (const [id, controller] of this.active) {
      const record = await this.book.get(id);
      // A detached upload is left to finish its request in flight (see LocalCopy.takeIntoMemory).
      if (!record || (!isSendable(record) && !record.detached) || !ownedBy(record, auth)) controller.abort();
    }
  }

  private async emit(): Promise<void> {
    if (this.listeners.size === 0) return;
    const items = await this.list().catch(() => null);
    if (!items) return;
    for (const listener of this.listeners) listener(items);
  }
}

export { toItem } from './records.ts';
