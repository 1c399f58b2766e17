import * as Comlink from 'comlink';
import type { UploadWorkerApi } from '../worker-api.ts';
import { isPending, type UploadItem, type Uploader } from '../uploader.ts';
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

/** A mounted list (useUploads): what it was last told, and how to stop telling it. */
interface View {
  listener: (items: UploadItem[]) => void;
  last: UploadItem[];
  /** Ends its subscription to the current worker (or the fallback); null until subscribed. */
  off: (() => void) | null;
}

/**
 * The page's side of the upload worker (style habit 8: one bridge creates it lazily). It hands
 * the worker what only the page has (the token in localStorage, online events, persist()),
 * and falls back to the main-thread uploader if the worker cannot start at all.
 */
export class UploadQueueClient implements Uploader {
  private ready: Promise<Ready | null> | null = null;
  /** Counts the workers started: a subscription made to one the page has since replaced is dropped. */
  private generation = 0;
  private fallbackInstance: Uploader | null = null;
  private states = new Map<string, Pick<UploadItem, 'state' | 'persistent'>>();
  private sentToken: string | null = null;
  /** Cancels shown before the worker has confirmed them (issue 11 item 4: the row reacts at once). */
  private readonly cancelling = new Set<string>();
  private readonly views = new Set<View>();
  private preparing = false;

  constructor(
    private readonly createWorker: () => Worker,
    private readonly fallback: () => Uploader,
  ) {}

  private start(): Promise<Ready | null> {
    this.ready ??= this.launch();
    return this.ready;
  }

  private async launch(): Promise<Ready | null> {
    // What this worker's page listeners were: a worker replaced after the bfcache takes them along.
    const listening: (() => void)[] = [];
    const listen = (target: EventTarget | undefined, type: string, listener: (event: Event) => void) => {
      target?.addEventListener(type, listener);
      listening.push(() => target?.removeEventListener(type, listener));
    };
    const stopListening = () => listening.splice(0).forEach((off) => off());
    let worker: Worker | null = null;
    try {
      worker = this.createWorker();
      const remote = Comlink.wrap<UploadWorkerApi>(worker);
      // Leaving the page: stop the chunk in flight now, not whenever the browser gets round
      // to it, so the next page's status question gets a settled answer. Coming back from
      // the back/forward cache starts a fresh worker, and the mounted lists follow it.
      const dying = worker;
      listen(window, 'pagehide', () => dying.terminate());
      listen(window, 'pageshow', (event) => {
        if (!(event as PageTransitionEvent).persisted) return;
        stopListening();
        this.restart();
      });
      const config = getRuntimeConfig();
      this.sentToken = getToken();
      await remote.init({ apiUrl: config.apiUrl, token: this.sentToken, chunkSize: config.chunkSize });
      // The page hears these more reliably than the worker does.
      listen(window, 'online', () => void remote.wake());
      listen(window, 'storage', (event) => {
        if ((event as StorageEvent).key === 'token') void remote.setToken(getToken());
      });
      listen(navigator.serviceWorker, 'message', (event) => {
        if ((event as MessageEvent).data === WAKE_MESSAGE) void remote.wake();
      });
      await remote.subscribe(Comlink.proxy((items: UploadItem[]) => this.watchFinished(items)));
      return { remote };
    } catch {
      // A worker that could not start is of no use: the fallback takes over for good, with no
      // restart on pageshow.
      stopListening();
      worker?.terminate();
      return null;
    }
  }

  /**
   * Back from the back/forward cache: the worker was terminated on pagehide. A new one resumes
   * the queue, and every mounted list subscribes to it, or it would stay frozen on what the old
   * worker said last until the screen remounts.
   */
  private restart(): void {
    this.ready = null;
    this.generation += 1;
    void this.start(); // stored uploads resume on any page, with or without a list on screen
    for (const view of this.views) {
      view.off = null; // the terminated worker cannot answer an unsubscribe
      void this.attach(view);
    }
  }

  /** Subscribes a view to whatever the page has now: the worker, or the fallback. */
  private async attach(view: View): Promise<void> {
    const generation = this.generation;
    const target = await this.target();
    if (!this.views.has(view) || generation !== this.generation) return;
    const deliver = (items: UploadItem[]) => {
      view.last = items;
      view.listener(this.withCancels(items));
    };
    if (!('remote' in target)) {
      view.off = target.subscribe(deliver);
      return;
    }
    const id = await target.remote.subscribe(Comlink.proxy(deliver));
    if (generation !== this.generation) return; // that worker is gone; restart() subscribed the view again
    const off = () => void target.remote.unsubscribe(id);
    if (this.views.has(view)) view.off = off;
    else off();
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
    const view: View = { listener, last: [], off: null };
    this.views.add(view);
    void this.attach(view);
    return () => {
      this.views.delete(view);
      view.off?.();
      view.off = null;
    };
  }

  /** Shows 'cancelled' at once; the worker confirms a moment later. */
  cancel = async (id: string) => {
    this.cancelling.add(id);
    for (const view of this.views) view.listener(this.withCancels(view.last));
    try {
      await this.forward((u) => u.cancel(id));
    } finally {
      this.cancelling.delete(id);
    }
  };

  undoCancel = (id: string) => this.forward((u) => u.undoCancel(id));

  async chooseAgain(id: string, file: File): Promise<void> {
    const target = await this.target();
    await ('remote' in target ? target.remote.chooseAgain(id, file) : target.chooseAgain(id, file));
  }

  /** Issue 11 item 1: keep or drop the user's uploads, then nothing is sent until someone signs in. */
  async signOut(keep: boolean): Promise<void> {
    const target = await this.target();
    if (!('remote' in target)) return target.signOut(keep);
    await target.remote.signOut(keep);
    this.sentToken = null;
  }

  async signedInAs(token: string, userId: string): Promise<void> {
    const target = await this.target();
    if ('remote' in target) await target.remote.signedInAs(token, userId);
    else await target.signedInAs(token, userId);
  }

  private withCancels(items: UploadItem[]): UploadItem[] {
    if (this.cancelling.size === 0) return items;
    return items.map((item) => (this.cancelling.has(item.id) && item.state !== 'done' ? { ...item, state: 'cancelled' } : item));
  }

  pause = (id: string) => this.forward((u) => u.pause(id));
  resume = (id: string) => this.forward((u) => u.resume(id));
  retry = (id: string) => this.forward((u) => u.retry(id));
  clearFinished = () => this.forward((u) => u.clearFinished());

  /** True while anything is still to send: the update prompt must not reload then (issue 5). */
  async hasWork(): Promise<boolean> {
    if (!this.ready) return false;
    const items = await this.list();
    return items.some(isActive);
  }

  private async forward(action: (uploader: Pick<Uploader, 'pause' | 'resume' | 'cancel' | 'undoCancel' | 'retry' | 'clearFinished'>) => Promise<void>): Promise<void> {
    const target = await this.target();
    await action('remote' in target ? target.remote : target);
  }

  private guardPreparing(preparing: boolean): void {
    if (preparing === this.preparing) return;
    this.preparing = preparing;
    if (preparing) window.addEventListener('beforeunload', askToStay);
    else window.removeEventListener('beforeunload', askToStay);
  }

  /** Issue 5: tell the user when an upload finished while they were elsewhere, or stopped being safe. */
  private watchFinished(items: UploadItem[]): void {
    this.guardPreparing(items.some((item) => item.state === 'preparing'));
    for (const item of newlyFinished(this.states, items)) void showFinishedNotification(item);
    for (const item of items) {
      const before = this.states.get(item.id);
      // Storage ran out mid-copy: the upload carries on from memory, and the user must know.
      if (before?.persistent && !item.persistent && item.state !== 'done') notifyError(NOT_PERSISTENT_MESSAGE);
    }
    this.states = new Map(items.map((item) => [item.id, { state: item.state, persistent: item.persistent }]));
  }
}

/**
 * Issue 11 item 2: while a file is still being copied into browser storage, leaving the page
 * would cut the copy off, so the browser asks the user to stay.
 */
function askToStay(event: BeforeUnloadEvent): void {
  event.preventDefault();
  // Older Chromium and Safari need returnValue set to show the prompt.
  event.returnValue = '';
}

/** Still moving, or paused but living only in this page (a reload would lose it). */
export function isActive(item: UploadItem): boolean {
  return isPending(item) && item.state !== 'interrupted' && (item.state !== 'paused' || !item.persistent);
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
