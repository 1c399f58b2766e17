import type { UploadItem } from '../uploader.ts';
import type { UploadStore } from '../store/upload-store.ts';
import type { UploadRecord } from '../store/schema.ts';
import { newUploadRecord, writeFileChunks } from '../store/write-chunks.ts';
import { UPLOAD_FIELDS } from '../../../contract/files.ts';
import { backoffDelay, DEFAULT_BACKOFF, type BackoffOptions } from './backoff.ts';
import { classifyAnswer } from './classify.ts';
import { fileSource, sendLockName, SourceLost, storeSource, writeLockName, type ChunkSource } from './chunk-source.ts';
import type { ChangeChannel, LockManagerLike, NetworkSignal, StorageEstimator } from './environment.ts';
import { acknowledgedBytes, NOTHING_RECEIVED, planResume, type ServerProgress } from './resume-plan.ts';
import type { Transport } from './transport.ts';

export interface QueueAuth {
  apiUrl: string;
  token: string | null;
}

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
  onFinished?: (item: UploadItem) => void;
}

/** One global lock: whoever holds it sends the stored queue, so two tabs never send the same bytes. */
export const SENDER_LOCK = 'stash-upload-sender';

class RetryLater extends Error {
  constructor(
    message: string,
    readonly retryAfterMs?: number,
    readonly checksum = false,
  ) {
    super(message);
  }
}
class Stop extends Error {}

const isAbort = (error: unknown) => error instanceof DOMException && error.name === 'AbortError';
const finished = (state: UploadRecord['state']) => state === 'done' || state === 'failed' || state === 'paused';

interface MemoryUpload {
  record: UploadRecord;
  file: Blob;
  source: ChunkSource;
}

/**
 * The upload queue (issue 5): persisted uploads are copied into IndexedDB and sent by whichever
 * context holds SENDER_LOCK; when storage is short they are sent straight from the File by the
 * page that has it. The transfer itself asks `files/upload/status` before every (re)attempt and
 * sends only what the server lacks (design §7).
 */
export class UploadQueue {
  private readonly memory = new Map<string, MemoryUpload>();
  private readonly active = new Map<string, AbortController>();
  /** Bytes of the chunk in flight sent but not yet acknowledged (shown, never counted as done). */
  private readonly inFlight = new Map<string, number>();
  private lastProgressEmit = 0;
  private readonly listeners = new Set<(items: UploadItem[]) => void>();
  /** Waiting for any change (a chunk written, a new upload, a pause). */
  private waiters = new Set<() => void>();
  /** Backing off: only wake() cuts this short, so other uploads' progress cannot turn it into a tight loop. */
  private sleepers = new Set<() => void>();
  private readonly unsubscribe: (() => void)[] = [];
  private readonly closing = new AbortController();
  private readonly loops: Promise<void>[] = [];
  private readonly writers = new Set<Promise<void>>();

  constructor(private readonly deps: QueueDeps) {}

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
    this.wake();
    await Promise.allSettled([...this.loops, ...this.writers]);
    for (const off of this.unsubscribe) off();
  }

  subscribe(listener: (items: UploadItem[]) => void): () => void {
    this.listeners.add(listener);
    void this.list().then((items) => this.listeners.has(listener) && listener(items));
    return () => this.listeners.delete(listener);
  }

  async list(): Promise<UploadItem[]> {
    const stored = this.deps.store ? await this.deps.store.list() : [];
    const items = [...stored.map((r) => toItem(r, true)), ...[...this.memory.values()].map((m) => toItem(m.record, false))].map((item) => {
      const sent = this.inFlight.get(item.id);
      return sent ? { ...item, sentBytes: sent } : item;
    });
    return items.sort((a, b) => a.createdAt - b.createdAt || a.id.localeCompare(b.id));
  }

  /**
   * Queues files. Storage honesty (issue 5): when the estimate says they will not fit, or
   * IndexedDB is missing, they are sent from memory and marked not persistent.
   */
  async enqueue(files: File[]): Promise<UploadItem[]> {
    const total = files.reduce((sum, f) => sum + f.size, 0);
    const persistent = this.deps.store !== null && (await this.hasRoomFor(total));
    const queued: UploadItem[] = [];
    for (const file of files) {
      const record = newUploadRecord(file, this.deps.chunkSize, 'page');
      let kept = false;
      if (persistent) kept = await this.startWriting(record, file);
      else this.keepInMemory(record, file);
      queued.push(toItem(record, kept));
    }
    this.changed(true);
    return queued;
  }

  async pause(id: string): Promise<void> {
    await this.setState(id, (r) => (r.state === 'done' || r.state === 'failed' ? r : { ...r, state: 'paused' }));
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

  async cancel(id: string): Promise<void> {
    this.active.get(id)?.abort();
    if (!this.memory.delete(id)) await this.deps.store?.remove(id);
    this.changed(true);
    // Design §7: the server drops what it kept; failing here is harmless (it expires in 24 h).
    try {
      const auth = await this.deps.auth();
      await this.deps.transport.postJson(`${auth.apiUrl}/api/v1/files/upload/cancel`, { token: auth.token ?? undefined, uploadId: id }, AbortSignal.timeout(10_000));
    } catch {
      // offline: the server's expiry reclaims it
    }
  }

  async clearFinished(): Promise<void> {
    for (const [id, m] of this.memory) if (m.record.state === 'done') this.memory.delete(id);
    if (this.deps.store) for (const r of await this.deps.store.list()) if (r.state === 'done') await this.deps.store.remove(r.id);
    this.changed(true);
  }

  /** Cuts any wait short (online again, Background Sync, the page came back). */
  wake(): void {
    const sleepers = this.sleepers;
    this.sleepers = new Set();
    for (const resolve of sleepers) resolve();
    this.notifyWaiters();
  }

  private notifyWaiters(): void {
    const waiters = this.waiters;
    this.waiters = new Set();
    for (const resolve of waiters) resolve();
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

  /**
   * Holds the write lock from before the record is visible until the copy ends (see
   * storeSource). Resolves once the upload is queued: true when in IndexedDB, false when even
   * its first write failed and it went to memory.
   */
  private startWriting(record: UploadRecord, file: Blob): Promise<boolean> {
    const store = this.deps.store!;
    return new Promise<void>((queued, failed) => {
      const writer = this.deps.locks
        .request(writeLockName(record.id), {}, async () => {
          try {
            await store.put(record);
          } catch (error) {
            failed(error);
            return;
          }
          queued();
          try {
            await writeFileChunks(store, record, file, () => this.changed(true));
          } catch {
            await this.takeIntoMemory(record, file);
          }
        })
        .finally(() => this.writers.delete(writer));
      this.writers.add(writer);
    }).then(
      () => true,
      () => {
        this.keepInMemory(record, file);
        return false;
      },
    );
  }

  /**
   * Quota or a failing disk mid-copy (issue 5): carry on from the File, honestly marked as not
   * surviving a reload. The sender (maybe another tab) first finishes the request in flight,
   * so no acknowledged byte is sent twice.
   */
  private async takeIntoMemory(record: UploadRecord, file: Blob): Promise<void> {
    const store = this.deps.store!;
    const marked = await store.update(record.id, (r) => ({ ...r, detached: true })).catch(() => undefined);
    if (!marked) return; // cancelled meanwhile
    this.changed(true);
    await this.deps.locks.request(sendLockName(record.id), {}, async () => {
      const latest = (await store.get(record.id)) ?? marked;
      await store.remove(record.id).catch(() => undefined);
      const { detached: _detached, ...rest } = latest;
      this.keepInMemory({ ...rest, state: rest.state === 'uploading' || rest.state === 'offline' ? 'waiting' : rest.state }, file);
    });
    this.changed(true);
  }

  private async nextStored(): Promise<{ record: UploadRecord; source: ChunkSource } | null> {
    const store = this.deps.store!;
    const record = (await store.list()).find((r) => !finished(r.state) && !r.detached);
    if (!record) return null;
    return { record, source: storeSource(store, record.id, this.deps.locks, (signal) => this.waitForChange(signal)) };
  }

  private nextInMemory(): { record: UploadRecord; source: ChunkSource } | null {
    const m = [...this.memory.values()].find((u) => !finished(u.record.state));
    return m ? { record: m.record, source: m.source } : null;
  }

  private async sendLoop(next: () => Promise<{ record: UploadRecord; source: ChunkSource } | null>): Promise<void> {
    while (!this.closing.signal.aborted) {
      const job = await next();
      if (!job) {
        await this.waitForChange(this.closing.signal).catch(() => undefined);
        continue;
      }
      await this.run(job.record.id, job.source);
    }
  }

  /** One upload until it is done, failed, paused, cancelled, handed over or the queue closes. */
  private run(id: string, source: ChunkSource): Promise<void> {
    return this.deps.locks.request(sendLockName(id), {}, () => this.runLocked(id, source));
  }

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
        if (!record || finished(record.state) || record.detached) return;
        if (!this.deps.network.isOnline()) {
          await this.setState(id, (r) => ({ ...r, state: 'offline' }));
          await this.waitForChange(controller.signal);
          continue;
        }
        if (!(await this.deps.auth()).token) {
          // Signed out (or the page has not handed the token over yet): keep it for later, never fail it.
          if (record.state !== 'waiting') await this.setState(id, (r) => ({ ...r, state: 'waiting' }));
          await this.waitForChange(controller.signal);
          continue;
        }
        if (record.state !== 'uploading') await this.setState(id, (r) => ({ ...r, state: 'uploading' }));
        try {
          await this.transfer(record, source, controller.signal, () => {
            failures = 0;
          });
          return;
        } catch (error) {
          if (controller.signal.aborted || isAbort(error)) return;
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
          await this.setState(id, (r) => (finished(r.state) ? r : { ...r, state: online ? 'uploading' : 'offline' }));
          if (!online) continue;
          const delay = retry.retryAfterMs ?? backoffDelay(failures, this.deps.backoff ?? DEFAULT_BACKOFF, this.deps.random);
          failures += 1;
          await this.sleep(delay, controller.signal);
        }
      }
    } finally {
      this.inFlight.delete(id);
      this.active.delete(id);
      this.closing.signal.removeEventListener('abort', abortOnClose);
    }
  }

  private async transfer(record: UploadRecord, source: ChunkSource, signal: AbortSignal, onProgress: () => void): Promise<void> {
    const auth = await this.deps.auth();
    const token = auth.token ?? undefined;
    const progress = await this.serverProgress(auth.apiUrl, token, record.id, signal);
    const { size, chunkSize, totalChunks } = record;
    await this.setState(record.id, (r) => ({ ...r, ackedBytes: acknowledgedBytes(totalChunks, size, chunkSize, progress) }));
    for (const index of progress.received) await source.release(index).catch(() => undefined);

    for (const step of planResume(totalChunks, size, chunkSize, progress)) {
      const current = await this.getRecord(record.id);
      if (!current || current.detached || current.state === 'paused') throw new DOMException('Stopped', 'AbortError');
      const chunk = await source.read(step.index, signal);
      const offset = step.offset < chunk.data.byteLength ? step.offset : 0;
      const fields: [string, string][] = [
        [UPLOAD_FIELDS.uploadId, record.id],
        [UPLOAD_FIELDS.fileSize, String(size)],
        [UPLOAD_FIELDS.chunkHash, chunk.hash],
        [UPLOAD_FIELDS.chunkIndex, String(step.index)],
        [UPLOAD_FIELDS.totalChunks, String(totalChunks)],
        [UPLOAD_FIELDS.originalname, record.name],
      ];
      if (offset > 0) fields.push([UPLOAD_FIELDS.chunkOffset, String(offset)]);
      if (token) fields.push([UPLOAD_FIELDS.token, token]);
      const answer = await this.deps.transport.postMultipart({
        url: `${auth.apiUrl}/api/v1/files/upload`,
        fields,
        fileField: UPLOAD_FIELDS.file,
        file: new Blob([offset > 0 ? chunk.data.slice(offset) : chunk.data]),
        filename: record.name,
        signal,
        onProgress: (sent) => this.reportSent(record.id, sent),
      });
      this.inFlight.delete(record.id);
      const outcome = classifyAnswer(answer);
      if (outcome.kind === 'fatal') throw new Stop(outcome.message);
      if (outcome.kind === 'retry') throw new RetryLater(outcome.reason, outcome.retryAfterMs, outcome.checksum);
      await source.release(step.index).catch(() => undefined);
      onProgress();
      const url = typeof outcome.body.url === 'string' ? outcome.body.url : undefined;
      const done = url !== undefined;
      const acked = done ? size : Math.min(size, (step.index + 1) * chunkSize);
      const updated = await this.setState(record.id, (r) =>
        r.state === 'paused' && !done ? { ...r, ackedBytes: acked } : { ...r, ackedBytes: acked, ...(done ? { state: 'done', url } : {}) },
      );
      if (done) {
        if (updated) this.deps.onFinished?.(toItem(updated, !this.memory.has(record.id)));
        return;
      }
    }
    // Every chunk answered but no link: the server lost some of them; look again.
    throw new RetryLater('The server is missing part of the file');
  }

  private async serverProgress(apiUrl: string, token: string | undefined, uploadId: string, signal: AbortSignal): Promise<ServerProgress> {
    const answer = await this.deps.transport.postJson(`${apiUrl}/api/v1/files/upload/status`, { token, uploadId }, signal);
    // The server has never seen it (or it expired): everything is still to send.
    if (answer.status === 404) return NOTHING_RECEIVED;
    const outcome = classifyAnswer(answer);
    if (outcome.kind === 'fatal') throw new Stop(outcome.message);
    if (outcome.kind === 'retry') throw new RetryLater(outcome.reason, outcome.retryAfterMs);
    const body = outcome.body;
    const received = Array.isArray(body.received) ? body.received.filter((n): n is number => Number.isInteger(n)) : [];
    const p = body.partial as { chunkIndex?: unknown; bytes?: unknown } | null | undefined;
    const partial = p && Number.isInteger(p.chunkIndex) && Number.isInteger(p.bytes) ? { chunkIndex: p.chunkIndex as number, bytes: p.bytes as number } : null;
    return { received, partial };
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
    await this.setState(id, (r) => ({ ...r, state: 'failed', error: message }));
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
    this.notifyWaiters();
    void this.emit();
    void this.abortStale();
  }

  private async abortStale(): Promise<void> {
    for (const [id, controller] of this.active) {
      const record = await this.getRecord(id);
      if (!record || record.state === 'paused') controller.abort();
    }
  }

  private async emit(): Promise<void> {
    if (this.listeners.size === 0) return;
    const items = await this.list().catch(() => null);
    if (!items) return;
    for (const listener of this.listeners) listener(items);
  }

  private waitForChange(signal: AbortSignal): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      if (signal.aborted) {
        reject(new DOMException('Aborted', 'AbortError'));
        return;
      }
      const done = () => {
        clearTimeout(timer);
        signal.removeEventListener('abort', onAbort);
        this.waiters.delete(done);
        resolve();
      };
      const onAbort = () => {
        done();
      };
      const timer = setTimeout(done, this.deps.pollMs ?? 2000);
      signal.addEventListener('abort', onAbort);
      this.waiters.add(done);
    });
  }

  /** A backoff pause that `wake()` (online, a resume) or an abort cuts short. */
  private sleep(ms: number, signal: AbortSignal): Promise<void> {
    return new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        signal.removeEventListener('abort', done);
        this.sleepers.delete(done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      signal.addEventListener('abort', done);
      this.sleepers.add(done);
    });
  }
}

export function toItem(record: UploadRecord, persistent: boolean): UploadItem {
  return {
    id: record.id,
    name: record.name,
    size: record.size,
    type: record.type,
    state: record.state,
    ackedBytes: record.ackedBytes,
    ...(record.error !== undefined ? { error: record.error } : {}),
    ...(record.url !== undefined ? { url: record.url } : {}),
    persistent,
    createdAt: record.createdAt,
  };
}

