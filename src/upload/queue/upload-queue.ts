import type { UploadItem } from '../uploader.ts';
import type { UploadStore } from '../store/upload-store.ts';
import type { UploadRecord } from '../store/schema.ts';
import { newUploadRecord } from '../store/write-chunks.ts';
import { fingerprintOf, sameFile } from '../store/fingerprint.ts';
import { backoffDelay, DEFAULT_BACKOFF, type BackoffOptions } from './backoff.ts';
import { CopyInterrupted, fileSource, sendLockName, SourceLost, storeSource, writerAlive, type ChunkSource } from './chunk-source.ts';
import type { ChangeChannel, LockManagerLike, NetworkSignal, StorageEstimator } from './environment.ts';
import { LocalCopy } from './local-copy.ts';
import { ownedBy, type QueueAuth } from './owner.ts';
import { CANCEL_UNDO_MS, isSendable, toItem } from './records.ts';
import { RetryLater, sendUpload, SignedOut, Stop } from './sender.ts';
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
  /** How long a cancel can be undone. */
  undoMs?: number;
  onFinished?: (item: UploadItem) => void;
}

/** One global lock: whoever holds it sends the stored queue, so two tabs never send the same bytes. */
export const SENDER_LOCK = 'stash-upload-sender';
export const PARALLEL_UPLOADS = 3;

const isAbort = (error: unknown) => error instanceof DOMException && error.name === 'AbortError';

interface MemoryUpload {
  record: UploadRecord;
  file: Blob;
  source: ChunkSource;
}

interface Job {
  record: UploadRecord;
  source: ChunkSource;
}

/**
 * The upload queue (issues 5 and 11): persisted uploads are copied into IndexedDB and sent by
 * whichever context holds SENDER_LOCK; when storage is short they are sent straight from the
 * File by the page that has it. Up to three files go at once. Every upload belongs to the user
 * who queued it: only they see it and it is sent only with their token.
 */
export class UploadQueue {
  private readonly memory = new Map<string, MemoryUpload>();
  private readonly active = new Map<string, AbortController>();
  /** Uploads being sent by this context (stored and in-memory together share the limit). */
  private readonly running = new Set<string>();
  /** Bytes of the chunk in flight sent but not yet acknowledged (shown, never counted as done). */
  private readonly inFlight = new Map<string, number>();
  /** The most ever shown per upload, so the bar never moves backwards (issue 11 item 4). */
  private readonly shown = new Map<string, number>();
  private readonly undoTimers = new Map<string, ReturnType<typeof setTimeout>>();
  /** A token the server refused with 401: nothing is sent with it again. */
  private refusedToken: string | null = null;
  private lastProgressEmit = 0;
  private readonly listeners = new Set<(items: UploadItem[]) => void>();
  private readonly wakeups: Wakeups;
  private readonly unsubscribe: (() => void)[] = [];
  private readonly closing = new AbortController();
  private readonly loops: Promise<void>[] = [];
  private readonly copy: LocalCopy | null;

  constructor(private readonly deps: QueueDeps) {
    this.wakeups = new Wakeups(deps.pollMs ?? 2000);
    this.copy = deps.store
      ? new LocalCopy({ store: deps.store, locks: deps.locks, changed: () => this.changed(true), keepInMemory: (r, f) => this.keepInMemory(r, f) })
      : null;
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
      void this.findInterruptedCopies().then(() => this.changed(true));
      void this.expireCancelled();
      this.loops.push(
        this.deps.locks
          .request(SENDER_LOCK, { signal }, () => this.sendLoop(() => this.nextStored()))
          .catch((error: unknown) => {
            if (!isAbort(error)) throw error;
          }),
      );
    }
    this.loops.push(this.sendLoop(async () => this.nextInMemory()));
    void this.emit();
  }

  /** Lets go of the lock and stops sending (a closing tab); stored uploads stay for the next one. */
  async close(): Promise<void> {
    this.closing.abort();
    for (const controller of this.active.values()) controller.abort();
    for (const timer of this.undoTimers.values()) clearTimeout(timer);
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
    const stored = this.deps.store ? await this.deps.store.list() : [];
    const records = [...stored.map((r) => ({ r, persistent: true })), ...[...this.memory.values()].map((m) => ({ r: m.record, persistent: false }))];
    const items = records.filter(({ r }) => ownedBy(r, auth)).map(({ r, persistent }) => this.withProgress(toItem(r, persistent)));
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
      const resumed = await this.continueInterrupted(file, auth);
      if (resumed) queued.push(toItem(resumed, true));
      else fresh.push(file);
    }
    const total = fresh.reduce((sum, f) => sum + f.size, 0);
    const persistent = this.copy !== null && (await this.hasRoomFor(total));
    for (const file of fresh) {
      const record: UploadRecord = { ...newUploadRecord(file, this.deps.chunkSize, 'page', auth.owner), ...(await fingerprintOf(file)) };
      const kept = persistent ? await this.copy!.start(record, file) : (this.keepInMemory(record, file), false);
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
    await this.setState(id, (r) => (isSendable(r) ? { ...r, state: 'paused' } : r));
    this.active.get(id)?.abort();
  }

  async resume(id: string): Promise<void> {
    await this.setState(id, (r) => (r.state === 'paused' ? { ...r, state: 'waiting' } : r));
    this.wake();
  }

  async retry(id: string): Promise<void> {
    await this.setState(id, (r) => (r.state === 'failed' ? { ...r, state: 'waiting', error: undefined } : r));
    this.wake();
  }

  /**
   * Issue 11 item 4: stops at once and says 'cancelled'; only after `undoMs` is the upload
   * dropped here and on the server. Until then undoCancel brings it back as it was.
   */
  async cancel(id: string): Promise<void> {
    const cancelledAt = Date.now();
    await this.setState(id, (r) => (r.state === 'cancelled' || r.state === 'done' ? r : { ...r, state: 'cancelled', beforeCancel: r.state, cancelledAt }));
    this.active.get(id)?.abort();
    this.scheduleRemoval(id, this.deps.undoMs ?? CANCEL_UNDO_MS);
  }

  async undoCancel(id: string): Promise<void> {
    clearTimeout(this.undoTimers.get(id));
    this.undoTimers.delete(id);
    await this.setState(id, (r) => {
      if (r.state !== 'cancelled') return r;
      const { beforeCancel, cancelledAt: _at, ...rest } = r;
      const state = beforeCancel === 'uploading' || beforeCancel === 'offline' ? 'waiting' : (beforeCancel ?? 'waiting');
      return { ...rest, state };
    });
    this.wake();
  }

  /**
   * The signed-in user leaves (issue 11 item 1). Their uploads stay in the store for their next
   * sign-in unless `keep` is false; either way this context stops sending them now.
   */
  async signOut(keep: boolean): Promise<void> {
    const auth = await this.deps.auth();
    if (!keep) for (const item of await this.list()) await this.dropNow(item.id, auth);
    for (const controller of this.active.values()) controller.abort();
    this.changed(true);
  }

  async clearFinished(): Promise<void> {
    const auth = await this.deps.auth();
    for (const [id, m] of this.memory) if (m.record.state === 'done' && ownedBy(m.record, auth)) this.memory.delete(id);
    if (this.deps.store) for (const r of await this.deps.store.list()) if (r.state === 'done' && ownedBy(r, auth)) await this.deps.store.remove(r.id);
    this.changed(true);
  }

  /**
   * Uploads queued before the owner's id was known (offline: `token:<hash>`), or before owners
   * existed (none), now belong to the user the server named.
   */
  async adoptOwner(from: string | undefined, to: string): Promise<void> {
    for (const m of this.memory.values()) if (m.record.owner === from) m.record = { ...m.record, owner: to };
    if (this.deps.store) for (const r of await this.deps.store.list()) if (r.owner === from) await this.deps.store.update(r.id, (x) => (x.owner === from ? { ...x, owner: to } : x));
    this.changed(true);
  }

  /** Cuts any wait short (online again, Background Sync, the page came back, a new token). */
  wake(): void {
    this.wakeups.wakeAll();
    void this.abortForeign();
  }

  private withProgress(item: UploadItem): UploadItem {
    if (item.state === 'done') {
      this.shown.delete(item.id);
      return item;
    }
    const bytes = Math.max(this.shown.get(item.id) ?? 0, item.ackedBytes + (this.inFlight.get(item.id) ?? 0));
    this.shown.set(item.id, bytes);
    return bytes > item.ackedBytes ? { ...item, sentBytes: bytes - item.ackedBytes } : item;
  }

  private scheduleRemoval(id: string, ms: number): void {
    clearTimeout(this.undoTimers.get(id));
    this.undoTimers.set(
      id,
      setTimeout(() => {
        this.undoTimers.delete(id);
        void this.deps.auth().then((auth) => this.dropIfCancelled(id, auth));
      }, ms),
    );
  }

  /** A cancel left in the store by a closed page is carried out by whoever starts next. */
  private async expireCancelled(): Promise<void> {
    const now = Date.now();
    for (const r of (await this.deps.store?.list()) ?? []) {
      if (r.state === 'cancelled') this.scheduleRemoval(r.id, Math.max(0, (r.cancelledAt ?? 0) + (this.deps.undoMs ?? CANCEL_UNDO_MS) - now));
    }
  }

  private async dropIfCancelled(id: string, auth: QueueAuth): Promise<void> {
    const record = await this.getRecord(id);
    if (record?.state === 'cancelled') await this.dropNow(id, auth);
  }

  private async dropNow(id: string, auth: QueueAuth): Promise<void> {
    const record = await this.getRecord(id);
    this.active.get(id)?.abort();
    if (!this.memory.delete(id)) await this.deps.store?.remove(id);
    this.shown.delete(id);
    this.changed(true);
    // Design §7: the server drops what it kept; only its owner may ask, and failing here is
    // harmless (it expires in 24 h).
    if (!record || !ownedBy(record, auth) || !auth.token) return;
    await this.deps.transport
      .postJson(`${auth.apiUrl}/api/v1/files/upload/cancel`, { token: auth.token, uploadId: id }, AbortSignal.timeout(10_000))
      .catch(() => undefined);
  }

  private async continueInterrupted(file: File, auth: QueueAuth): Promise<UploadRecord | null> {
    if (!this.copy || !this.deps.store) return null;
    const candidates = (await this.deps.store.list()).filter((r) => r.state === 'interrupted' && ownedBy(r, auth) && r.name === file.name && r.size === file.size);
    if (candidates.length === 0) return null;
    const picked = await fingerprintOf(file);
    const match = candidates.find((r) => sameFile(r, picked));
    if (!match) return null;
    await this.copy.continue(match, file);
    return (await this.deps.store.get(match.id)) ?? null;
  }

  /** Copies nobody is writing any more, and that never finished, wait for their file. */
  private async findInterruptedCopies(): Promise<void> {
    const store = this.deps.store!;
    for (const r of await store.list()) {
      if (r.writeComplete || !isSendable(r) || (await writerAlive(this.deps.locks, r.id))) continue;
      await store.update(r.id, (x) => (x.writeComplete || !isSendable(x) ? x : { ...x, state: 'interrupted' }));
    }
  }

  private async hasRoomFor(bytes: number): Promise<boolean> {
    const storage = this.deps.storage;
    if (!storage) return true;
    try {
      // Ask to be kept under storage pressure; the answer does not change what we do.
      await storage.persist().catch(() => false);
      const estimate = await storage.estimate();
      if (!estimate || estimate.quota === undefined) return true;
      const free = estimate.quota - (estimate.usage ?? 0);
      // Room for the bytes plus a margin for IndexedDB's own overhead.
      return free >= bytes * 1.1 + 10 * 1024 * 1024;
    } catch {
      return true;
    }
  }

  private keepInMemory(record: UploadRecord, file: Blob): void {
    this.memory.set(record.id, { record, file, source: fileSource(file, record.chunkSize) });
  }

  /** The signed-in user's next stored upload nobody here is sending; interrupted copies are left alone. */
  private async nextStored(): Promise<Job | null> {
    const store = this.deps.store!;
    const auth = await this.deps.auth();
    for (const record of await store.list()) {
      if (!isSendable(record) || this.running.has(record.id) || !ownedBy(record, auth)) continue;
      if (!record.writeComplete && !(await writerAlive(this.deps.locks, record.id))) {
        // Issue 11 item 2: nothing is sent for a copy cut off by a reload.
        await this.findInterruptedCopies();
        this.changed(true);
        continue;
      }
      return { record, source: storeSource(store, record.id, this.deps.locks, (signal) => this.wakeups.change(signal)) };
    }
    return null;
  }

  private async nextInMemory(): Promise<Job | null> {
    const auth = await this.deps.auth();
    const m = [...this.memory.values()].find((u) => isSendable(u.record) && !this.running.has(u.record.id) && ownedBy(u.record, auth));
    return m ? { record: m.record, source: m.source } : null;
  }

  /** Starts up to `parallel` uploads (issue 11 item 3), each under its own send lock. */
  private async sendLoop(next: () => Promise<Job | null>): Promise<void> {
    const mine = new Set<Promise<void>>();
    while (!this.closing.signal.aborted) {
      const job = this.running.size < (this.deps.parallel ?? PARALLEL_UPLOADS) ? await next() : null;
      if (!job) {
        await this.wakeups.change(this.closing.signal).catch(() => undefined);
        continue;
      }
      const id = job.record.id;
      this.running.add(id);
      const run = this.deps.locks
        .request(sendLockName(id), {}, () => this.runLocked(id, job.source))
        .catch(() => undefined)
        .finally(() => {
          this.running.delete(id);
          mine.delete(run);
          this.wakeups.notify();
        });
      mine.add(run);
    }
    await Promise.allSettled([...mine]);
  }

  /** One upload until it is done, failed, paused, cancelled, interrupted, handed over, no longer the signed-in user's, or the queue closes. */
  private async runLocked(id: string, source: ChunkSource): Promise<void> {
    const controller = new AbortController();
    const abortOnClose = () => controller.abort();
    this.closing.signal.addEventListener('abort', abortOnClose);
    this.active.set(id, controller);
    let failures = 0;
    let checksumFailures = 0;
    try {
      while (!controller.signal.aborted) {
        const record = await this.getRecord(id);
        const auth = await this.deps.auth();
        if (!record || !isSendable(record) || !ownedBy(record, auth)) return;
        if (!this.deps.network.isOnline()) {
          await this.setState(id, (r) => (isSendable(r) ? { ...r, state: 'offline' } : r));
          await this.wakeups.change(controller.signal);
          continue;
        }
        if (auth.token === this.refusedToken) {
          // The token was refused (signed out elsewhere): wait for its owner to sign in again, never fail it.
          if (record.state !== 'waiting') await this.setState(id, (r) => (isSendable(r) ? { ...r, state: 'waiting' } : r));
          await this.wakeups.change(controller.signal);
          continue;
        }
        if (record.state !== 'uploading') await this.setState(id, (r) => (isSendable(r) ? { ...r, state: 'uploading' } : r));
        try {
          await sendUpload({
            transport: this.deps.transport,
            apiUrl: auth.apiUrl,
            token: auth.token!,
            record,
            source,
            signal: controller.signal,
            current: () => this.getRecord(id),
            acknowledged: (bytes, url) => this.acknowledged(id, bytes, url),
            onSent: (sent) => this.reportSent(id, sent),
            onProgress: () => {
              failures = 0;
            },
          });
          return;
        } catch (error) {
          this.inFlight.delete(id);
          if (controller.signal.aborted || isAbort(error)) return;
          if (error instanceof SignedOut) {
            this.refusedToken = auth.token;
            continue;
          }
          if (error instanceof CopyInterrupted) {
            await this.setState(id, (r) => (isSendable(r) ? { ...r, state: 'interrupted' } : r));
            return;
          }
          if (error instanceof Stop || error instanceof SourceLost) {
            await this.fail(id, error.message);
            return;
          }
          const retry = error instanceof RetryLater ? error : new RetryLater('Network error');
          if (retry.checksum && ++checksumFailures > (this.deps.maxChecksumRetries ?? 5)) {
            await this.fail(id, retry.message);
            return;
          }
          const online = this.deps.network.isOnline();
          await this.setState(id, (r) => (isSendable(r) ? { ...r, state: online ? 'uploading' : 'offline' } : r));
          if (!online) continue;
          const delay = retry.retryAfterMs ?? backoffDelay(failures, this.deps.backoff ?? DEFAULT_BACKOFF, this.deps.random);
          failures += 1;
          await this.wakeups.sleep(delay, controller.signal);
        }
      }
    } finally {
      this.inFlight.delete(id);
      this.active.delete(id);
      this.closing.signal.removeEventListener('abort', abortOnClose);
    }
  }

  private async acknowledged(id: string, bytes: number, url?: string): Promise<void> {
    this.inFlight.delete(id);
    const updated = await this.setState(id, (r) => ({ ...r, ackedBytes: bytes, ...(url !== undefined ? { state: 'done', url } : {}) }));
    if (url !== undefined && updated) this.deps.onFinished?.(toItem(updated, !this.memory.has(id)));
  }

  /** Upload progress events come many times a second; listeners hear at most ~4 per second. */
  private reportSent(id: string, sent: number): void {
    this.inFlight.set(id, sent);
    const now = Date.now();
    if (now - this.lastProgressEmit < 250) return;
    this.lastProgressEmit = now;
    void this.emit();
  }

  private async fail(id: string, message: string): Promise<void> {
    await this.setState(id, (r) => (isSendable(r) ? { ...r, state: 'failed', error: message } : r));
  }

  private async getRecord(id: string): Promise<UploadRecord | undefined> {
    return this.memory.get(id)?.record ?? (await this.deps.store?.get(id));
  }

  private async setState(id: string, change: (r: UploadRecord) => UploadRecord): Promise<UploadRecord | undefined> {
    const m = this.memory.get(id);
    let next: UploadRecord | undefined;
    if (m) {
      next = change(m.record);
      m.record = next;
    } else {
      next = await this.deps.store?.update(id, change);
    }
    this.changed(true);
    return next;
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
      const record = await this.getRecord(id);
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
