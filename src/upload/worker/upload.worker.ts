import * as Comlink from 'comlink';
import type { UploadItem } from '../uploader.ts';
import type { UploadWorkerApi, WorkerInit } from '../worker-api.ts';
import { UploadStore } from '../store/upload-store.ts';
import { Identity } from '../queue/account.ts';
import { broadcastChannel, globalNetwork } from '../queue/environment.ts';
import { xhrTransport } from '../queue/transport.ts';
import { UploadQueue, type QueueAuth } from '../queue/upload-queue.ts';

declare const self: DedicatedWorkerGlobalScope;

let queue: UploadQueue | null = null;
let store: UploadStore | null = null;
let auth: QueueAuth = { apiUrl: '', token: null, owner: null, alias: null };
let chunkSize = 0;
const subscriptions = new Map<number, () => void>();
let nextSubscription = 1;

function requireQueue(): UploadQueue {
  if (!queue) throw new Error('The upload worker was not initialised');
  return queue;
}

async function saveAuth(): Promise<void> {
  // The service worker reads this to resume the queue from Background Sync with no page open:
  // the token and whose uploads it may send with it (issue 11 item 1).
  await store?.setAuth({ apiUrl: auth.apiUrl, token: auth.token, owner: auth.owner, chunkSize }).catch(() => undefined);
}

/**
 * Who the token belongs to (src/upload/queue/account.ts). Until the server says (offline), the
 * owner is the token's hash; when it does, what was queued under the hash is theirs. Uploads kept
 * from before owners existed go to the first user who signs in, as they did before.
 */
const identity = new Identity({
  apiUrl: () => auth.apiUrl,
  store: () => store,
  transport: xhrTransport,
  currentToken: () => auth.token,
  async setOwner(owner, alias) {
    auth = { ...auth, owner, alias };
    await saveAuth();
  },
  async named(who) {
    await queue?.adoptOwner(who.provisional, who.owner);
    await queue?.adoptOwner(undefined, who.owner);
    queue?.wake();
  },
});

async function setToken(token: string | null): Promise<void> {
  const changed = token !== auth.token;
  auth = changed ? { ...auth, token, owner: null, alias: null } : { ...auth, token };
  if (changed) await queue?.signOut(true); // stop sending with the old token now
  await identity.begin(token);
  queue?.wake();
}

/** The worker's whole surface (style habit 8: a few functions through comlink). */
const api: UploadWorkerApi = {
  /** Returns whether uploads can be kept in IndexedDB (false: memory only, lost on reload). */
  async init(options: WorkerInit): Promise<boolean> {
    chunkSize = options.chunkSize;
    auth = { ...auth, apiUrl: options.apiUrl };
    if (queue) {
      await setToken(options.token);
      return store !== null;
    }
    store = await UploadStore.open().catch(() => null);
    auth = { apiUrl: options.apiUrl, token: options.token, owner: null, alias: null };
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
    await identity.begin(options.token);
    queue.start();
    return store !== null;
  },
  setToken,
  async signedInAs(token: string, owner: string) {
    await identity.remember(token, owner);
    if (token === auth.token && auth.owner !== owner) await identity.identify(token);
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
  undoCancel: (id: string) => requireQueue().undoCancel(id),
  retry: (id: string) => requireQueue().retry(id),
  chooseAgain: (id: string, file: File) => requireQueue().chooseAgain(id, file),
  clearFinished: () => requireQueue().clearFinished(),
  signOut: async (keep: boolean) => {
    await requireQueue().signOut(keep);
    await setToken(null);
  },
  wake: () => {
    // Online again: an owner only known by the token's hash can now be asked for.
    void identity.askNowIfUnknown(auth.token, auth.owner);
    queue?.wake();
  },
};

Comlink.expose(api);
