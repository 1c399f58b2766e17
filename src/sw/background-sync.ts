import { UploadStore } from '../upload/store/upload-store.ts';
import { broadcastChannel, globalNetwork } from '../upload/queue/environment.ts';
import { fetchTransport } from '../upload/queue/transport.ts';
import { tokenKey } from '../upload/queue/account.ts';
import { UploadQueue } from '../upload/queue/upload-queue.ts';
import { CHUNK_SIZE } from '../../contract/upload-fields.ts';
import { finishedNotice, newlyFinished } from '../upload/finished-notice.ts';
import { isPending, type UploadItem } from '../upload/uploader.ts';

export const SYNC_TAG = 'stash-upload-queue';
export const WAKE_MESSAGE = 'stash-wake-uploads';
/** Chromium ends a sync event after a few minutes; stop a little before. */
const SYNC_BUDGET_MS = 4 * 60 * 1000;

/**
 * Background Sync fired (connectivity is back). An open page's worker does the sending, so it
 * is only woken; with no page open the service worker runs the same queue itself, under the same
 * Web Lock, until the queue is empty or the budget ends (then the browser retries the sync).
 */
export async function resumeQueue(scope: ServiceWorkerGlobalScope): Promise<void> {
  const windows = await scope.clients.matchAll({ type: 'window' });
  if (windows.length > 0) {
    for (const client of windows) client.postMessage(WAKE_MESSAGE);
    return;
  }
  const store = await UploadStore.open();
  const auth = await store.getAuth();
  if (!auth?.token || !auth.owner) {
    store.close();
    return;
  }
  const channel = broadcastChannel();
  // The queue asks for auth on every listing, wake and poll; the token rarely changes, so its
  // key is hashed once per token rather than each time.
  let keyed: { token: string; key: string } | null = null;
  const keyOf = async (token: string): Promise<string> => {
    if (keyed?.token !== token) keyed = { token, key: await tokenKey(token) };
    return keyed.key;
  };
  const queue = new UploadQueue({
    store,
    transport: fetchTransport,
    locks: scope.navigator.locks,
    network: globalNetwork(scope),
    channel,
    // Issue 11 item 1: only the signed-in user's uploads, with their token; signed out, none.
    // What the token filed before the server named its user stays its own (QueueAuth.alias).
    auth: async () => {
      const latest = await store.getAuth();
      const token = latest?.token ?? null;
      const alias = token ? await keyOf(token) : null;
      return { apiUrl: latest?.apiUrl ?? auth.apiUrl, token, owner: token ? (latest?.owner ?? null) : null, alias };
    },
    chunkSize: auth.chunkSize || CHUNK_SIZE,
  });
  // What each upload was when last seen, woken by every change of the queue rather than a 2 s
  // poll alone. Entries are never dropped: the list holds only the uploads of whoever the store
  // names as signed in, which a page opening mid-sync rewrites, and an upload missing from one
  // listing must still be announced when it shows up done.
  const seen = new Map<string, Pick<UploadItem, 'state'>>();
  const remember = (items: UploadItem[]) => items.forEach((item) => seen.set(item.id, { state: item.state }));
  remember(await queue.list());
  let changed = () => {};
  const unsubscribe = queue.subscribe(() => changed());
  queue.start();
  const deadline = Date.now() + SYNC_BUDGET_MS;
  let pending = true;
  while (Date.now() < deadline) {
    const woken = new Promise<void>((resolve) => {
      changed = resolve;
      setTimeout(resolve, 2000);
    });
    const items = await queue.list();
    // No page is open to tell the user: the service worker announces what it finished.
    for (const item of newlyFinished(seen, items)) await announce(scope, item);
    remember(items);
    pending = items.some((item) => isPending(item) && item.state !== 'paused' && item.state !== 'interrupted');
    if (!pending) break;
    await woken;
  }
  unsubscribe();
  await queue.close();
  channel.close();
  store.close();
  if (pending) throw new Error('Uploads still pending: retry the sync later');
}

async function announce(scope: ServiceWorkerGlobalScope, item: UploadItem): Promise<void> {
  const { title, options } = finishedNotice(item);
  // No look at Notification.permission first: showNotification refuses by itself without it, and
  // a worker started before the user allowed notifications may still read the old answer.
  // A refused notification changes nothing about the upload.
  await scope.registration.showNotification(title, options).catch(() => undefined);
}
