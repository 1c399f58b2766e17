import fsp from 'node:fs/promises';
import type { Database } from './index.ts';

/**
 * How long a long run of write batches steps aside after each, once its writes are on disk. With
 * none, an account's removal on SQLite (some 6 pages written per file: 5.6 GiB for 90,000 files)
 * kept the disk's queue full, and every upload's sync of its bytes waited behind it: a 1 KiB
 * file's `fdatasync` beside the removal p50 490 ms, max 723 ms. Syncing the WAL after each batch
 * alone: p50 121 ms, max 292. Both: p50 1 ms (as with nothing running), max 244 ms, the removal
 * 30 s instead of 20 (bench/README.md, "Removing a large account on SQLite").
 */
export const STEP_ASIDE_MS = 50;

/** The WAL of each SQLite database opened from a file (PostgreSQL paces itself: its own process). */
const wals = new WeakMap<Database, string>();

/** Called by openDatabase for a SQLite file. */
export function pacedWrites(db: Database, file: string): void {
  wals.set(db, `${file}-wal`);
}

/**
 * Between two batches of a long run of writes: waits until what `db` committed so far is on
 * disk (its WAL synced on a thread of libuv's, not the event loop), then STEP_ASIDE_MS more, so
 * other writers' syncs find the disk's queue empty. Nothing to wait for on PostgreSQL or in
 * memory. SQLite's locks live in the database and `-shm` files, so closing this handle on the
 * WAL releases none of them.
 */
export async function letDiskCatchUp(db: Database): Promise<void> {
  const wal = wals.get(db);
  if (wal === undefined) return;
  const handle = await fsp.open(wal, 'r+').catch((err: unknown) => {
    // No WAL yet (nothing written since the last connection closed): nothing to sync.
    if ((err as { code?: unknown }).code === 'ENOENT') return null;
    throw err;
  });
  if (handle === null) return;
  try {
    await handle.datasync();
  } finally {
    await handle.close();
  }
  await new Promise((resolve) => setTimeout(resolve, STEP_ASIDE_MS));
}
