/**
 * The browser facilities the queue leans on, as small interfaces so the same queue runs in a
 * dedicated worker, a service worker and a Node test.
 */

/** The subset of the Web Locks API the queue uses (navigator.locks matches it). */
export interface LockManagerLike {
  request<T>(name: string, options: { ifAvailable?: boolean; signal?: AbortSignal }, callback: (lock: unknown) => Promise<T>): Promise<T>;
}

export interface NetworkSignal {
  isOnline(): boolean;
  /** Calls back on every change; returns the unsubscribe function. */
  subscribe(listener: (online: boolean) => void): () => void;
}

/** Tells other contexts (tabs, the service worker) that the stored queue changed. */
export interface ChangeChannel {
  post(): void;
  subscribe(listener: () => void): () => void;
  close(): void;
}

export interface StorageEstimator {
  estimate(): Promise<{ quota?: number; usage?: number } | undefined>;
  persist(): Promise<boolean>;
}

export const CHANGE_CHANNEL_NAME = 'stash-uploads';

export function broadcastChannel(name: string = CHANGE_CHANNEL_NAME): ChangeChannel {
  const channel = new BroadcastChannel(name);
  const listeners = new Set<() => void>();
  channel.onmessage = () => {
    for (const listener of listeners) listener();
  };
  return {
    post: () => channel.postMessage('changed'),
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    close: () => channel.close(),
  };
}

/** navigator.onLine and the online/offline events, in a window, worker or service worker. */
export function globalNetwork(scope: EventTarget & { navigator: { onLine: boolean } }): NetworkSignal {
  return {
    isOnline: () => scope.navigator.onLine,
    subscribe(listener) {
      const on = () => listener(true);
      const off = () => listener(false);
      scope.addEventListener('online', on);
      scope.addEventListener('offline', off);
      return () => {
        scope.removeEventListener('online', on);
        scope.removeEventListener('offline', off);
      };
    },
  };
}
