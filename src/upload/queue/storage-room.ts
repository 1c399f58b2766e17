import type { StorageEstimator } from './environment.ts';

/**
 * Storage honesty (issue 5): whether the browser's estimate leaves room for these bytes plus a
 * margin for IndexedDB's own overhead. No estimator or no answer: assume there is.
 */
export async function hasRoomFor(storage: StorageEstimator | undefined, bytes: number): Promise<boolean> {
  if (!storage) return true;
  try {
    // Ask to be kept under storage pressure; the answer does not change what we do.
    await storage.persist().catch(() => false);
    const estimate = await storage.estimate();
    if (!estimate || estimate.quota === undefined) return true;
    const free = estimate.quota - (estimate.usage ?? 0);
    return free >= bytes * 1.1 + 10 * 1024 * 1024;
  } catch {
    return true;
  }
}
