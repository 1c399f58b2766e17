import * as Comlink from 'comlink';
import type { UploadWorkerApi } from '../worker-api.ts';
import type { UploadItem, Uploader } from '../uploader.ts';
import { getRuntimeConfig } from '../../lib/runtime-config.ts';
import { getToken } from '../../lib/token.ts';
import { notifyError } from '../../lib/notify.ts';
import { finishedNotice, newlyFinished } from '../finished-notice.ts';

/** Issue 5: said once per batch that has to stay in memory. */
export const NOT_PERSISTENT_MESSAGE = 'Storage is short: this upload will not survive a reload. Keep this page open until it finishes.';
export const SYNC_TAG = 'stash-upload-queue';
/** What the service worker posts to open pages when Background Sync fires. */
export const WAKE_MESSAGE = 'stash-wake-uploads';

interface Ready {
  remote: Comlink.Remote<UploadWorkerApi>;
}

/**
 * The page's side of the upload worker (style habit 8: one bridge creates it lazily). It hands
 * the worker what only the page has (the token in localStorage, online events, persist()),
 * and falls back to the main-thread uploader if the worker cannot start at all.
 */
export class UploadQueueClient implements Uploader {
  private ready: Promise<Ready | null> | null = null;
  private fallbackInstance: Uploader | null = null;
  private states = new Map<string, Pick<UploadItem, 'state' | 'persistent'>>();
  private sentToken: string | null = null;

  constructor(
    private readonly createWorker: () => Worker,
    private readonly fallback: () => Uploader,
  ) {}

  private start(): Promise<Ready | null> {
    this.ready ??= (async () => {
      try {
        const worker = this.createWorker();
        const remote = Comlink.wrap<UploadWorkerApi>(worker);
        // Leaving the page: stop the chunk in flight now, not whenever the browser gets round
        // to it, so the next page's status question gets a settled answer. Coming back from
        // the back/forward cache starts a fresh worker.
        const onPageHide = () => worker.terminate();
        const onPageShow = (event: PageTransitionEvent) => {
          if (!event.persisted) return;
          window.removeEventListener('pagehide', onPageHide);
          window.removeEventListener('pageshow', onPageShow);
          this.ready = null;
          void this.start();
        };
        window.addEventListener('pagehide', onPageHide);
        window.addEventListener('pageshow', onPageShow);
        const config = getRuntimeConfig();
        this.sentToken = getToken();
        await remote.init({ apiUrl: config.apiUrl, token: this.sentToken, chunkSize: config.chunkSize });
        // The page hears these more reliably than the worker does.
        window.addEventListener('online', () => void remote.wake());
        window.addEventListener('storage', (event) => {
          if (event.key === 'token') void remote.setToken(getToken());
        });
        navigator.serviceWorker?.addEventListener('message', (event: MessageEvent) => {
          if (event.data === WAKE_MESSAGE) void remote.wake();
        });
        await remote.subscribe(Comlink.proxy((items: UploadItem[]) => this.watchFinished(items)));
        return { remote };
      } catch {
        return null;
      }
    })();
    return this.ready;
  }

  private async target(): Promise<Ready | Uploader> {
    const ready = await this.start();
    if (ready) {
      // Signing in or out in this tab fires no storage event: hand over the current token.
      const token = getToken();
      if (token !== this.sentToken) {
        this.sentToken = token;
        await ready.remote.setToken(token);
      }
      return ready;
    }
    this.fallbackInstance ??= this.fallback();
    return this.fallbackInstance;
  }

  /** Starts the worker so stored uploads resume as soon as the app opens. */
  async resumeStored(): Promise<void> {
    await this.start();
  }

  async enqueue(files: File[]): Promise<void> {
    // Inside the user's gesture: the only moment a permission prompt is allowed.
    if (typeof Notification !== 'undefined' && Notification.permission === 'default') void Notification.requestPermission().catch(() => undefined);
    void navigator.storage?.persist?.().catch(() => false);
    const target = await this.target();
    if (!('remote' in target)) return target.enqueue(files);
    const items = await target.remote.enqueue(files);
    if (items.some((item) => !item.persistent)) notifyError(NOT_PERSISTENT_MESSAGE);
    await registerSync();
  }

  async list(): Promise<UploadItem[]> {
    const target = await this.target();
    return 'remote' in target ? target.remote.list() : target.list();
  }

  subscribe(listener: (items: UploadItem[]) => void): () => void {
    let closed = false;
    let off: (() => void) | null = null;
    void this.target().then(async (target) => {
      if (!('remote' in target)) {
        off = target.subscribe(listener);
      } else {
        const id = await target.remote.subscribe(Comlink.proxy(listener));
        off = () => void target.remote.unsubscribe(id);
      }
      if (closed) off();
    });
    return () => {
      closed = true;
      off?.();
    };
  }

  pause = (id: string) => this.forward((u) => u.pause(id));
  resume = (id: string) => this.forward((u) => u.resume(id));
  cancel = (id: string) => this.forward((u) => u.cancel(id));
  retry = (id: string) => this.forward((u) => u.retry(id));
  clearFinished = () => this.forward((u) => u.clearFinished());

  /** True while anything is still to send: the update prompt must not reload then (issue 5). */
  async hasWork(): Promise<boolean> {
    if (!this.ready) return false;
    const items = await this.list();
    return items.some(isActive);
  }

  private async forward(action: (uploader: Pick<Uploader, 'pause' | 'resume' | 'cancel' | 'retry' | 'clearFinished'>) => Promise<void>): Promise<void> {
    const target = await this.target();
    await action('remote' in target ? target.remote : target);
  }

  /** Issue 5: tell the user when an upload finished while they were elsewhere, or stopped being safe. */
  private watchFinished(items: UploadItem[]): void {
    for (const item of newlyFinished(this.states, items)) void showFinishedNotification(item);
    for (const item of items) {
      const before = this.states.get(item.id);
      // Storage ran out mid-copy: the upload carries on from memory, and the user must know.
      if (before?.persistent && !item.persistent && item.state !== 'done') notifyError(NOT_PERSISTENT_MESSAGE);
    }
    this.states = new Map(items.map((item) => [item.id, { state: item.state, persistent: item.persistent }]));
  }
}

/** Still moving, or paused but living only in this page (a reload would lose it). */
export function isActive(item: UploadItem): boolean {
  return item.state === 'waiting' || item.state === 'uploading' || item.state === 'offline' || (!item.persistent && item.state === 'paused');
}

export async function showFinishedNotification(item: UploadItem): Promise<void> {
  if (typeof Notification === 'undefined' || Notification.permission !== 'granted') return;
  if (document.visibilityState === 'visible') return;
  const { title, options } = finishedNotice(item);
  try {
    // Android only shows notifications through the service worker.
    const registration = await navigator.serviceWorker?.getRegistration();
    if (registration) await registration.showNotification(title, options);
    else new Notification(title, options);
  } catch {
    // a refused notification changes nothing about the upload
  }
}

/** Background Sync (Chromium): the service worker wakes the queue when connectivity returns. */
async function registerSync(): Promise<void> {
  try {
    const registration = await navigator.serviceWorker?.getRegistration();
    const sync = (registration as (ServiceWorkerRegistration & { sync?: { register(tag: string): Promise<void> } }) | undefined)?.sync;
    await sync?.register(SYNC_TAG);
  } catch {
    // unsupported or refused: the worker's own online listener still resumes the queue
  }
}

export function createUploadQueueClient(fallback: () => Uploader): UploadQueueClient {
  return new UploadQueueClient(() => new Worker(new URL('../worker/upload.worker.ts', import.meta.url), { type: 'module', name: 'stash-uploads' }), fallback);
}
