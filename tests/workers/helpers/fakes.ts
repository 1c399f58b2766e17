import type { ChangeChannel, LockManagerLike, NetworkSignal, StorageEstimator } from '../../../src/upload/queue/environment.ts';

/**
 * Web Locks for several queues in one test process ("tabs"): exclusive, first come first
 * served, with ifAvailable and signal as navigator.locks has them.
 */
export function createLocks(): LockManagerLike {
  const held = new Set<string>();
  const waiting = new Map<string, (() => void)[]>();
  const release = (name: string) => {
    const next = waiting.get(name)?.shift();
    if (next) next();
    else held.delete(name);
  };
  return {
    async request<T>(name: string, options: { ifAvailable?: boolean; signal?: AbortSignal }, callback: (lock: unknown) => Promise<T>): Promise<T> {
      if (held.has(name)) {
        if (options.ifAvailable) return callback(null);
        await new Promise<void>((resolve, reject) => {
          const queue = waiting.get(name) ?? [];
          const grant = () => {
            options.signal?.removeEventListener('abort', onAbort);
            resolve();
          };
          const onAbort = () => {
            queue.splice(queue.indexOf(grant), 1);
            reject(new DOMException('Aborted', 'AbortError'));
          };
          options.signal?.addEventListener('abort', onAbort);
          queue.push(grant);
          waiting.set(name, queue);
        });
      } else {
        held.add(name);
      }
      try {
        return await callback({ name });
      } finally {
        release(name);
      }
    },
  };
}

/** BroadcastChannel between the "tabs" of one test. */
export function createChannelHub(): () => ChangeChannel {
  const members = new Set<Set<() => void>>();
  return () => {
    const listeners = new Set<() => void>();
    members.add(listeners);
    return {
      post() {
        for (const other of members) if (other !== listeners) for (const l of other) queueMicrotask(l);
      },
      subscribe(listener) {
        listeners.add(listener);
        return () => listeners.delete(listener);
      },
      close: () => members.delete(listeners),
    };
  };
}

export function createNetwork(online = true): NetworkSignal & { set(online: boolean): void } {
  let state = online;
  const listeners = new Set<(online: boolean) => void>();
  return {
    isOnline: () => state,
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    set(next) {
      state = next;
      for (const l of listeners) l(next);
    },
  };
}

export function fixedStorage(quota: number, usage = 0): StorageEstimator {
  return { estimate: async () => ({ quota, usage }), persist: async () => true };
}
