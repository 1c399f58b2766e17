import type { Database } from '../../db/index.ts';

/**
 * Files that just left the files host: rows deleted, or an account hidden (users/account-removals.ts
 * markForRemoval). The files host of this process keeps rows it served for a while
 * (files-host/file-meta-cache.ts) and is told here at once, after the commit, so a file whose bytes
 * the store kept (a refused delete, doomed-bytes.ts; an account's bytes still to go) is not
 * served from memory. Other processes are not told: they stop trusting what they keep within
 * file-meta-cache.ts's TRUST_MS, as they see a settings change within the settings cache's
 * lifetime (server/README.md, "What the files host keeps in memory"). Kept per database, as
 * list-anchors.ts keeps its per-process state, so two apps in one test process stay apart.
 */
export type FilesGone = { names: readonly string[] } | { owner: string };

type Listener = (gone: FilesGone) => void;

const listeners = new WeakMap<Database, Set<Listener>>();

/** Calls `listener` for every file of `db` that goes in this process; returns the unsubscribe. */
export function onFilesGone(db: Database, listener: Listener): () => void {
  let set = listeners.get(db);
  if (!set) listeners.set(db, (set = new Set()));
  set.add(listener);
  return () => set.delete(listener);
}

/** Tells this process's files hosts on `db`; call once the change is committed. */
export function filesGone(db: Database, gone: FilesGone): void {
  for (const listener of listeners.get(db) ?? []) listener(gone);
}
