import type { filesUploadCancel, UploadChunkResponse, UploadDoneResponse } from '../../../contract/files.ts';
import { FILES_UPLOAD_PATH, UPLOAD_FIELDS } from '../../../contract/upload-fields.ts';
import { call, errorMessage, postForm, toApiError } from '../../lib/api-client.ts';
import { getRuntimeConfig } from '../../lib/runtime-config.ts';
import { getToken } from '../../lib/token.ts';
import type { UploadItem, Uploader } from '../uploader.ts';
import { CANCEL_UNDO_MS } from '../queue/records.ts';

/** Spec §8: the message when an upload fails and the server gave no words of its own. */
export const MSG_UPLOAD_FAILED = 'Error uploading file';
const MAX_CHUNK_ATTEMPTS = 3;

interface Entry {
  item: UploadItem;
  file: File;
  nextChunk: number;
  attempts: number;
  abort?: AbortController;
  beforeCancel?: UploadItem['state'];
  undoTimer?: ReturnType<typeof setTimeout>;
}

type Send = (form: FormData, onProgress: (sent: number) => void, signal: AbortSignal) => Promise<UploadChunkResponse | UploadDoneResponse>;

const defaultSend: Send = (form, onProgress, signal) => postForm(FILES_UPLOAD_PATH, form, onProgress, signal);

/**
 * The main-thread uploader (issue 4): chunks of config.chunkSize (spec §9, 80 MB) sent in order,
 * text fields first so the server can stream the chunk to its place (design §7). It lives in
 * memory only: a reload loses it (`persistent: false`); the PWA's worker queue replaces it where
 * it can. One file uploads at a time so a phone's uplink is not split across many files.
 */
export class DirectUploader implements Uploader {
  private entries = new Map<string, Entry>();
  private listeners = new Set<(items: UploadItem[]) => void>();
  private running = false;

  constructor(private readonly send: Send = defaultSend) {
    if (typeof window !== 'undefined') window.addEventListener('online', () => this.wakeOffline());
  }

  async enqueue(files: File[]): Promise<void> {
    for (const file of files) {
      const id = crypto.randomUUID();
      this.entries.set(id, {
        file,
        nextChunk: 0,
        attempts: 0,
        item: { id, name: file.name, size: file.size, type: file.type, state: 'waiting', ackedBytes: 0, persistent: false, createdAt: Date.now() },
      });
    }
    this.emit();
    void this.pump();
  }

  async list(): Promise<UploadItem[]> {
    return this.snapshot();
  }

  subscribe(listener: (items: UploadItem[]) => void): () => void {
    this.listeners.add(listener);
    listener(this.snapshot());
    return () => this.listeners.delete(listener);
  }

  async pause(id: string): Promise<void> {
    const e = this.entries.get(id);
    if (!e || e.item.state === 'done') return;
    e.abort?.abort();
    this.update(e, { state: 'paused', sentBytes: 0 });
  }

  async resume(id: string): Promise<void> {
    const e = this.entries.get(id);
    if (!e || (e.item.state !== 'paused' && e.item.state !== 'offline')) return;
    this.update(e, { state: 'waiting' });
    void this.pump();
  }

  async retry(id: string): Promise<void> {
    const e = this.entries.get(id);
    if (!e || e.item.state !== 'failed') return;
    e.attempts = 0;
    this.update(e, { state: 'waiting', error: undefined });
    void this.pump();
  }

  /** Issue 11 item 4: stops at once, shows 'cancelled', and forgets it after CANCEL_UNDO_MS unless undone. */
  async cancel(id: string): Promise<void> {
    const e = this.entries.get(id);
    if (!e || e.item.state === 'done' || e.item.state === 'cancelled') return;
    e.abort?.abort();
    e.beforeCancel = e.item.state;
    this.update(e, { state: 'cancelled', sentBytes: 0 });
    clearTimeout(e.undoTimer);
    e.undoTimer = setTimeout(() => this.drop(id), CANCEL_UNDO_MS);
  }

  async undoCancel(id: string): Promise<void> {
    const e = this.entries.get(id);
    if (!e || e.item.state !== 'cancelled') return;
    clearTimeout(e.undoTimer);
    const before = e.beforeCancel ?? 'waiting';
    this.update(e, { state: before === 'uploading' || before === 'preparing' ? 'waiting' : before });
    void this.pump();
  }

  async chooseAgain(): Promise<void> {
    throw new Error('This upload lives in this page only and cannot be continued from a new copy.');
  }

  /** Nothing here survives the page, so nothing can be kept for the next sign-in: it all goes. */
  async signOut(): Promise<void> {
    for (const id of [...this.entries.keys()]) this.drop(id);
  }

  /** Uploads here live in this page and go with the token it holds: no owner to learn. */
  async signedInAs(): Promise<void> {}

  private drop(id: string): void {
    const e = this.entries.get(id);
    if (!e) return;
    e.abort?.abort();
    clearTimeout(e.undoTimer);
    this.entries.delete(id);
    this.emit();
    // Design §7: tell the server to reclaim the partial bytes now rather than after 24 hours.
    if (e.nextChunk > 0 && e.item.state !== 'done') {
      void call<typeof filesUploadCancel>('/api/v1/files/upload/cancel', { uploadId: id }).catch(() => undefined);
    }
  }

  async clearFinished(): Promise<void> {
    for (const [id, e] of this.entries) if (e.item.state === 'done') this.entries.delete(id);
    this.emit();
  }

  private wakeOffline() {
    for (const e of this.entries.values()) if (e.item.state === 'offline') this.update(e, { state: 'waiting' });
    void this.pump();
  }

  private snapshot(): UploadItem[] {
    return [...this.entries.values()].map((e) => ({ ...e.item }));
  }

  private emit() {
    const items = this.snapshot();
    for (const l of this.listeners) l(items);
  }

  private update(e: Entry, patch: Partial<UploadItem>) {
    e.item = { ...e.item, ...patch };
    this.emit();
  }

  private async pump(): Promise<void> {
    if (this.running) return;
    this.running = true;
    try {
      for (;;) {
        const next = [...this.entries.values()].find((e) => e.item.state === 'waiting');
        if (!next) break;
        await this.run(next);
      }
    } finally {
      this.running = false;
    }
  }

  private async run(e: Entry): Promise<void> {
    const chunkSize = getRuntimeConfig().chunkSize;
    const total = Math.max(1, Math.ceil(e.file.size / chunkSize));
    this.update(e, { state: 'uploading' });
    while (e.nextChunk < total) {
      if (this.entries.get(e.item.id) !== e || e.item.state !== 'uploading') return; // cancelled or paused
      const index = e.nextChunk;
      const start = index * chunkSize;
      const blob = e.file.slice(start, Math.min(start + chunkSize, e.file.size));
      const form = new FormData();
      form.append(UPLOAD_FIELDS.uploadId, e.item.id);
      form.append(UPLOAD_FIELDS.fileSize, String(e.file.size));
      form.append(UPLOAD_FIELDS.chunkIndex, String(index));
      form.append(UPLOAD_FIELDS.totalChunks, String(total));
      form.append(UPLOAD_FIELDS.originalname, e.file.name);
      const token = getToken();
      if (token) form.append(UPLOAD_FIELDS.token, token);
      form.append(UPLOAD_FIELDS.file, blob, e.file.name); // last: design §7 streams it straight to its place
      e.abort = new AbortController();
      try {
        const res = await this.send(form, (sent) => this.update(e, { sentBytes: Math.min(sent, blob.size) }), e.abort.signal);
        e.nextChunk = index + 1;
        e.attempts = 0;
        const acked = Math.min(e.file.size, start + blob.size);
        if ('url' in res && res.url) {
          this.update(e, { state: 'done', ackedBytes: e.file.size, sentBytes: 0, url: res.url });
          return;
        }
        this.update(e, { ackedBytes: acked, sentBytes: 0 });
      } catch (err) {
        if (e.item.state !== 'uploading') return; // paused or cancelled mid-request
        const apiErr = toApiError(err);
        if (apiErr.status === 0 && typeof navigator !== 'undefined' && !navigator.onLine) {
          this.update(e, { state: 'offline', sentBytes: 0 });
          return;
        }
        // Network blips and checksum mismatches (design §7 `retry: true`, 422) are worth another try.
        const retryable = apiErr.status === 0 || apiErr.status === 422 || apiErr.status >= 500 || apiErr.status === 429;
        e.attempts += 1;
        if (retryable && e.attempts < MAX_CHUNK_ATTEMPTS) {
          await new Promise((r) => setTimeout(r, 500 * 2 ** e.attempts));
          continue;
        }
        this.update(e, { state: 'failed', sentBytes: 0, error: errorMessage(err, MSG_UPLOAD_FAILED) });
        return;
      }
    }
    // An upload whose last answer carried no url (should not happen): leave it failed, not "done" without a link.
    if (e.item.state === 'uploading') this.update(e, { state: 'failed', error: MSG_UPLOAD_FAILED });
  }
}
