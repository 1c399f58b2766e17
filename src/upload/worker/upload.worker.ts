import * as Comlink from 'comlink';
import type { UploadItem } from '../uploader.ts';
import type { UploadWorkerApi, WorkerInit } from '../worker-api.ts';
import { UploadStore } from '../store/upload-store.ts';
import { broadcastChannel, globalNetwork } from '../queue/environment.ts';
import { xhrTransport } from '../queue/transport.ts';
import { UploadQueue, type QueueAuth } from '../queue/upload-queue.ts';

declare const self: DedicatedWorkerGlobalScope;

let queue: UploadQueue | null = null;
let store: UploadStore | null = null;
let auth: QueueAuth = { apiUrl: '', token: null };
let chunkSize = 0;
const subscriptions = new Map<number, () => void>();
let nextSubscription = 1;

function requireQueue(): UploadQueue {
  if (!queue) throw new Error('The upload worker was not initialised');
  return queue;
}

async function saveAuth(): Promise<void> {
  // The service worker reads this to resume the queue from Background Sync with no page open.
  await store?.setAuth({ apiUrl: auth.apiUrl, token: auth.token, chunkSize }).catch(() => undefined);
}

/** The worker's whole surface (style habit 8: a few functions through comlink). */
const api: UploadWorkerApi = {
  /** Returns whether uploads can be kept in IndexedDB (false: memory only, lost on reload). */
  async init(options: WorkerInit): Promise<boolean> {
    auth = { apiUrl: options.apiUrl, token: options.token };
    chunkSize = options.chunkSize;
    if (queue) {
      await saveAuth();
      return store !== null;
    }
    store = await UploadStore.open().catch(() => null);
    await saveAuth();
    queue = new UploadQueue({
      store,
      transport: xhrTransport,
      locks: self.navigator.locks,
      network: globalNetwork(self),
      channel: broadcastChannel(),
      auth: async () => auth,
      chunkSize,
      // persist() is a window-only call: the page's bridge asks for it.
      storage: { estimate: () => self.navigator.storage.estimate(), persist: async () => false },
    });
    queue.start();
    return store !== null;
  },
  async setToken(token: string | null): Promise<void> {
    auth = { ...auth, token };
    await saveAuth();
    queue?.wake();
  },
  enqueue: (files: File[]): Promise<UploadItem[]> => requireQueue().enqueue(files),
  list: (): Promise<UploadItem[]> => requireQueue().list(),
  subscribe(listener: (items: UploadItem[]) => void): number {
    const id = nextSubscription++;
    subscriptions.set(id, requireQueue().subscribe(listener));
    return id;
  },
  unsubscribe(id: number): void {
    subscriptions.get(id)?.();
    subscriptions.delete(id);
  },
  pause: (id: string) => requireQueue().pause(id),
  resume: (id: string) => requireQueue().resume(id),
  cancel: (id: string) => requireQueue().cancel(id),
  retry: (id: string) => requireQueue().retry(id),
  clearFinished: () => requireQueue().clearFinished(),
  wake: () => queue?.wake(),
};

Comlink.expose(api);
