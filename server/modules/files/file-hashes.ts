import crypto from 'node:crypto';
import type { Database } from '../../db/index.ts';
import type { Deps } from '../../deps.ts';

const BATCH = 50;

/**
 * Fills files.sha256 for files that have none (issue 10: migration and backups verify every
 * file by it). A pass over the stored bytes in the background, never on the upload's request
 * path: chunks arrive in any order on any process, so no process sees a file's bytes in order.
 * Returns how many files got their hash; stops after `budgetMs` or once `stopped()` says so
 * (a process shutting down).
 */
export async function backfillFileHashes(deps: Deps, options: { budgetMs?: number; stopped?: () => boolean } = {}): Promise<number> {
  const deadline = Date.now() + (options.budgetMs ?? 5 * 60 * 1000);
  const over = () => Date.now() >= deadline || (options.stopped?.() ?? false);
  let done = 0;
  const failed = new Set<string>();
  while (!over()) {
    const rows = await filesWithoutHashQuery(deps.db, BATCH + failed.size).execute();
    const todo = rows.filter((r) => !failed.has(r.id));
    if (todo.length === 0) break;
    for (const row of todo) {
      try {
        const hash = crypto.createHash('sha256');
        for await (const piece of deps.storage.read(row.storage_key)) hash.update(piece as Buffer);
        await deps.db.updateTable('files').set({ sha256: hash.digest('hex') }).where('id', '=', row.id).where('sha256', 'is', null).execute();
        done += 1;
      } catch {
        // Deleted meanwhile, or the store is briefly away: the next period tries again.
        failed.add(row.id);
      }
      if (over()) break;
    }
  }
  return done;
}

/** The oldest files without a hash, read from the partial index files_sha256_pending (migration 2026-12-01-10). */
export function filesWithoutHashQuery(db: Database, limit: number) {
  return db.selectFrom('files').select(['id', 'storage_key']).where('sha256', 'is', null).orderBy('time_created').limit(limit);
}
