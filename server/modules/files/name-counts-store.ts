import type { Database } from '../../db/index.ts';

/**
 * Name filter counts kept for every process (migration 2026-12-03-11): a process that never
 * counted a filter carries another's count forward through the list's log (name-counts.ts)
 * instead of counting every match again. Only counts of lists of SHARED_FROM files or more are
 * kept here: a smaller list is counted about as fast as this row is read.
 */
export const SHARED_FROM = 5_000;
/** Rows kept, the most recently kept first: a few for each person filtering a large list. */
export const SHARED_COUNTS = 1_000;

export interface StoredCount {
  changes: number;
  total: number;
  viaTrigrams: boolean;
}

/** The count kept for `key` by any process, or null. */
export async function loadCount(db: Database, key: string): Promise<StoredCount | null> {
  const row = await db.selectFrom('file_name_counts').select(['changes', 'total', 'via_trigrams']).where('key', '=', key).executeTakeFirst();
  return row ? { changes: Number(row.changes), total: Number(row.total), viaTrigrams: Number(row.via_trigrams) === 1 } : null;
}

/**
 * Keeps a count unless one read under a later counter is kept already, then prunes past `keep`
 * rows. Failures only cost another process a count.
 */
export async function saveCount(db: Database, key: string, userId: string | undefined, count: StoredCount, keep = SHARED_COUNTS): Promise<void> {
  try {
    await db
      .insertInto('file_name_counts')
      .values({ key, user_id: userId ?? null, changes: count.changes, total: count.total, via_trigrams: count.viaTrigrams ? 1 : 0, kept_at: Date.now() })
      .onConflict((oc) =>
        oc
          .column('key')
          .doUpdateSet((eb) => ({ changes: eb.ref('excluded.changes'), total: eb.ref('excluded.total'), via_trigrams: eb.ref('excluded.via_trigrams'), kept_at: eb.ref('excluded.kept_at') }))
          .whereRef('file_name_counts.changes', '<', 'excluded.changes'),
      )
      .execute();
    const oldest = db.selectFrom('file_name_counts').select('kept_at').orderBy('kept_at', 'desc').limit(1).offset(keep - 1);
    await db.deleteFrom('file_name_counts').where('kept_at', '<', oldest).execute();
  } catch {
    // The owner removed meanwhile (the foreign key), or the database going away at shutdown.
  }
}
