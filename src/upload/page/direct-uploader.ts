import type { UploadChunkResponse, UploadDoneResponse } from '../../../contract/files.ts';
import { FILES_UPLOAD_PATH, UPLOAD_FIELDS } from '../../../contract/upload-fields.ts';
import { apiUrl, errorMessage, postForm, toApiError } from '../../lib/api-client.ts';
import { getRuntimeConfig } from '../../lib/runtime-config.ts';
import { getToken } from '../../lib/token.ts';
import type { UploadItem, Uploader } from '../uploader.ts';
import { cancelOnServer, FINISH_WAIT_MS, type CancelOutcome } from '../queue/cancel-upload.ts';
import { CANCEL_UNDO_MS, CANCELLED_TOO_LATE } from '../queue/records.ts';
import { fetchTransport, type Transport } from '../queue/transport.ts';

/** Spec §8: the message when an upload fails and the server gave no words of its own. */
export const MSG_UPLOAD_FAILED = 'Error uploading file';
const MAX_CHUNK_ATTEMPTS = 3;
const REQUEST_TIMEOUT_MS = 10_000;
const FINISH_POLL_MS = 500;
/** This uploader lives as long as the page: nothing cuts a cancel's wait for a finish short. */
const NEVER_CLOSED = new AbortController().signal;
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

interface Entry {
  item: UploadItem;
  file: File;
  nextChunk: number;
  attempts: number;
  abort?: AbortController;
  beforeCancel?: UploadItem['state'];
  undoTimer?: ReturnType<typeof setTimeout>;
  /** A request of it went out: the server may hold bytes of it, or be listing it as a file. */
  sent: boolean;
  /** Its cancel is being carried out on the server: no longer shown, nor undone. */
  dropping: boolean;
}

export interface DirectUploaderOptions {
  /** The JSON calls (design §7 files/upload/cancel and status, files/delete); tests stand in for the server. */
  transport?: Transport;
  /** How long a cancel can be undone. */
  undoMs?: number;
}

/** Read afresh: TypeScript keeps a state checked before an await, though a cancel may change it meanwhile. */
const stateOf = (e: Entry): UploadItem['state'] => e.item.state;

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
  private readonly transport: Transport;
  private readonly undoMs: number;

  constructor(
    private readonly send: Send = defaultSend,
    options: DirectUploaderOptions = {},
  ) {
    this.transport = options.transport ?? fetchTransport;
    this.undoMs = options.undoMs ?? CANCEL_UNDO_MS;
    if (typeof window !== 'undefined') window.addEventListener('online', () => this.wakeOffline());
  }

  async enqueue(files: File[]): Promise<void> {
    for (const file of files) {
      const id = crypto.randomUUID();
      this.entries.set(id, {
        file,
        nextChunk: 0,
        attempts: 0,
        sent: false,
        dropping: false,
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
    // A cancelled upload stays cancelled: paused, its cancel would never be carried out.
    if (!e || e.item.state === 'done' || e.item.state === 'cancelled') return;
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

  /**
   * Issue 11 item 4: stops at once and shows 'cancelled'; only once the undo window is over is
   * the server told (dropCancelled), so an undo before then loses nothing.
   */
  async cancel(id: string): Promise<void> {
    const e = this.entries.get(id);
    if (!e || e.item.state === 'done' || e.item.state === 'cancelled') return;
    e.abort?.abort();
    e.beforeCancel = e.item.state;
    this.update(e, { state: 'cancelled', sentBytes: 0 });
    this.dropLater(e);
  }

  async undoCancel(id: string): Promise<void> {
    const e = this.entries.get(id);
    if (!e || e.item.state !== 'cancelled' || e.dropping) return;
    clearTimeout(e.undoTimer);
    const before = e.beforeCancel ?? 'waiting';
    this.update(e, { state: before === 'uploading' || before === 'preparing' ? 'waiting' : before });
    void this.pump();
  }

  async chooseAgain(): Promise<void> {
    throw new Error('This upload lives in this page only and cannot be continued from a new copy.');
  }

  /**
   * Nothing here survives the page, so nothing can be kept for the next sign-in: it all goes,
   * told to the server while the token is still here. As in the queue's sign-out, a cancelled
   * upload must not end up online; any other leaves its partial bytes to be reclaimed now rather
   * than after 24 hours (design §7), and a file it became is kept.
   */
  async signOut(): Promise<void> {
    const token = getToken();
    for (const e of [...this.entries.values()]) {
      this.forget(e);
      if (!token || !e.sent || e.dropping || e.item.state === 'done') continue;
      if (e.item.state === 'cancelled') void this.cancelOnServer(e, token);
      else void this.postJson('files/upload/cancel', { token, uploadId: e.item.id }).catch(() => undefined);
    }
  }

  /** Uploads here live in this page and go with the token it holds: no owner to learn. */
  async signedInAs(): Promise<void> {}

  private dropLater(e: Entry): void {
    clearTimeout(e.undoTimer);
    e.undoTimer = setTimeout(() => void this.dropCancelled(e), this.undoMs);
  }

  /**
   * The undo window is over (the queue's dropNow, for the page). Cancelled while the server was
   * already listing it (the last chunk all sent, "cancel at 99 %"), the upload may have become a
   * file: cancelOnServer deletes it, so a cancel means the file is not online. The row goes only
   * once the server has answered; if the delete is refused it shows done, with its link and why.
   */
  private async dropCancelled(e: Entry): Promise<void> {
    if (!this.isLive(e) || e.item.state !== 'cancelled' || e.dropping) return;
    const token = getToken();
    if (!e.sent || !token) {
      this.forget(e);
      return;
    }
    e.dropping = true;
    this.emit();
    const outcome = await this.cancelOnServer(e, token);
    e.dropping = false;
    if (!this.isLive(e)) return; // signed out meanwhile
    if (outcome.kind === 'dropped') this.forget(e);
    else if (outcome.kind === 'listed') this.update(e, { state: 'done', url: outcome.url, ackedBytes: e.file.size, sentBytes: 0, notice: CANCELLED_TOO_LATE });
    else {
      // Still being listed after FINISH_WAIT_MS, or status unanswered: shown cancelled again and
      // asked again later, as the queue does.
      this.emit();
      this.dropLater(e);
    }
  }

  private cancelOnServer(e: Entry, token: string): Promise<CancelOutcome> {
    return cancelOnServer({ transport: this.transport, sleep, signal: NEVER_CLOSED }, { apiUrl: apiUrl(''), token }, e.item.id);
  }

  private forget(e: Entry): void {
    e.abort?.abort();
    clearTimeout(e.undoTimer);
    if (this.isLive(e)) this.entries.delete(e.item.id);
    this.emit();
  }

  /** Still this uploader's (not dropped by a cancel or a sign-out). */
  private isLive(e: Entry): boolean {
    return this.entries.get(e.item.id) === e;
  }

  private postJson(path: string, body: Record<string, unknown>) {
    return this.transport.postJson(`${apiUrl('')}/api/v1/${path}`, body, AbortSignal.timeout(REQUEST_TIMEOUT_MS));
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
    return [...this.entries.values()].filter((e) => !e.dropping).map((e) => ({ ...e.item }));
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
      if (!this.isLive(e) || e.item.state !== 'uploading') return; // cancelled or paused
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
      e.sent = true;
      try {
        const res = await this.send(form, (sent) => this.update(e, { sentBytes: Math.min(sent, blob.size) }), e.abort.signal);
        e.nextChunk = index + 1;
        e.attempts = 0;
        // Answered after a cancel that came too late to stop the request, its link with it: the
        // row stays cancelled, and the file is deleted once the undo window is over.
        if (!this.isLive(e) || stateOf(e) === 'cancelled') return;
        const acked = Math.min(e.file.size, start + blob.size);
        if ('url' in res && res.url) {
          this.update(e, { state: 'done', ackedBytes: e.file.size, sentBytes: 0, url: res.url });
          return;
        }
        this.update(e, { ackedBytes: acked, sentBytes: 0 });
      } catch (err) {
        if (!this.isLive(e) || e.item.state !== 'uploading') return; // paused, cancelled or signed out mid-request
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
    if (e.item.state !== 'uploading') return;
    const url = await this.linkOf(e);
    if (!this.isLive(e) || e.item.state !== 'uploading') return;
    // No link even so: failed, not "done" without a link.
    this.update(e, url ? { state: 'done', ackedBytes: e.file.size, sentBytes: 0, url } : { state: 'failed', sentBytes: 0, error: MSG_UPLOAD_FAILED });
  }

  /**
   * Every chunk is in, but no answer carried the link: the last chunk was sent again (after a
   * pause, or a cancel undone at 99 %) while the server was still listing its first copy, and
   * such a chunk is answered with progress. `files/upload/status` gives the link once the file
   * is listed (design §7); the finish's lease bounds the wait on the server.
   */
  private async linkOf(e: Entry): Promise<string | null> {
    const token = getToken();
    const deadline = Date.now() + FINISH_WAIT_MS;
    while (token && this.isLive(e) && e.item.state === 'uploading' && Date.now() < deadline) {
      const answer = await this.postJson('files/upload/status', { token, uploadId: e.item.id }).catch(() => null);
      const body = (answer?.body ?? null) as { url?: unknown } | null;
      if (answer?.status === 200 && typeof body?.url === 'string') return body.url;
      if (answer?.status !== 200) return null;
      await sleep(FINISH_POLL_MS);
    }
    return null;
  }
}
