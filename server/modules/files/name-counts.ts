import { sql } from 'kysely';
import { containsInsensitive, type Database } from '../../db/index.ts';
import { loadCount, saveCount, SHARED_FROM, type StoredCount } from './name-counts-store.ts';

/**
 * Issue 9, name filters no index narrows. The pager's total for a name filter is the count of
 * every match, and for a needle in 40 % of a million names (or one too short for trigrams) that
 * count reads the whole table: 0.33 s on SQLite, on the event loop, and 0.6 s on PostgreSQL. A
 * person who filters then pages through the matches (or whose list is asked for again) asks the
 * same count each time; this keeps it per process, checked against the list's `changes` counter
 * (the owner's, or the site's for the all-files list; migration 2026-11-25-10), which the
 * triggers bump with every insert and delete of the list's files in the same transaction. The
 * counter only grows, so a count stored beside the counter value its own statement read is
 * never taken for a later list. Names never change once stored (no route renames a file; the
 * trigram table, kept by insert and delete triggers only, relies on it too).
 *
 * A change of the list does not cost a count either: the counting triggers log each file that
 * came or went with its names (migrations 2026-11-29-10, 2026-12-03-10), so a count kept at
 * counter c is carried to a later counter by the matches among the log's entries after c (the
 * same `like` the count runs, on a few rows). It is counted afresh when the log cannot tell:
 * fewer entries than the counter moved (pruned, or a change that logs nothing), an entry without
 * names, or more than MAX_CARRIED changes since. A count and the counter it is kept under are
 * read by one statement (list-reads.ts countFiles), so the count holds exactly the changes up to it.
 * A large list's fresh count is also kept for the other processes (name-counts-store.ts).
 */

/** Counts kept per process: a few for each person filtering at once. */
export const KEPT_COUNTS = 256;
/** Changes a kept count is carried over, at most: the log entries one request reads and checks. */
export const MAX_CARRIED = 2_000;

/** What a filter's count was read with: the plan the page takes (SQLite) and the count itself. */
export interface KnownCount {
  total: number;
  /** SQLite: the trigram table's candidates were few enough to read the page from (sqlite-name-plan.ts). */
  viaTrigrams: boolean;
}

interface Kept extends KnownCount {
  changes: number;
}

/** The filters a count depends on; the list's counter covers the rest. */
export interface CountedFilters {
  userId?: string;
  originalName?: string;
  actualName?: string;
  username?: string;
}

const perDatabase = new WeakMap<Database, Map<string, Kept>>();

/**
 * A username filter picks users by a name that can change without any file changing, so no
 * counter covers it: null, never kept.
 */
export function countKey(q: CountedFilters): string | null {
  if (q.username) return null;
  // The database folds the needle's case (containsInsensitive); only ASCII letters fold alike in
  // both dialects and in JavaScript, so only they are folded here: ΟΔΟΣ and οδος match different names.
  const fold = (s: string | undefined) => (s ?? '').replace(/[A-Z]+/g, (c) => c.toLowerCase());
  return JSON.stringify([q.userId ?? null, fold(q.originalName), fold(q.actualName)]);
}

/** The count kept for `key` when the list's counter still reads `changes`. */
export function knownCount(db: Database, key: string | null, changes: number | null): KnownCount | undefined {
  if (key === null || changes === null) return undefined;
  const all = perDatabase.get(db);
  const kept = all?.get(key);
  if (!all || !kept || kept.changes !== changes) return undefined;
  // Asked again: the last to be pushed out.
  all.delete(key);
  all.set(key, kept);
  return { total: kept.total, viaTrigrams: kept.viaTrigrams };
}

/**
 * The count kept for `key` at an earlier counter, carried to `changes` by the list's log (see
 * above) and kept there; undefined when none is kept or the log cannot tell.
 */
export async function carriedCount(db: Database, key: string | null, q: CountedFilters, changes: number | null): Promise<KnownCount | undefined> {
  if (key === null || changes === null) return undefined;
  const carries = (from: Kept | StoredCount | null | undefined): from is Kept | StoredCount => !!from && from.changes <= changes && changes - from.changes <= MAX_CARRIED;
  // This process's own count, else one another process kept (name-counts-store.ts).
  const own = perDatabase.get(db)?.get(key);
  const kept = carries(own) ? own : await loadCount(db, key).catch(() => null);
  if (!carries(kept)) return undefined;
  if (kept.changes === changes) {
    keepCount(db, key, changes, kept);
    return { total: kept.total, viaTrigrams: kept.viaTrigrams };
  }
  const counter = q.userId === undefined ? 'changes' : 'user_changes';
  const matches = [
    q.originalName ? containsInsensitive(sql.ref('original_name'), q.originalName) : null,
    q.actualName ? containsInsensitive(sql.ref('actual_name'), q.actualName) : null,
  ].filter((m) => m !== null);
  if (matches.length === 0) return undefined;
  let entries = db
    .selectFrom('file_list_log')
    .select((eb) => [
      eb.fn.countAll<number>().as('n'),
      eb.fn.count<number>('original_name').as('named'),
      sql<number>`coalesce(sum(case when ${sql.join(matches, sql` and `)} then delta else 0 end), 0)`.as('moved'),
    ])
    .where(counter, '>', kept.changes)
    .where(counter, '<=', changes);
  if (q.userId !== undefined) entries = entries.where('user_id', '=', q.userId);
  const row = await entries.executeTakeFirst();
  const logged = changes - kept.changes;
  if (!row || Number(row.n) !== logged || Number(row.named) !== logged) return undefined;
  const count = { total: kept.total + Number(row.moved), viaTrigrams: kept.viaTrigrams };
  keepCount(db, key, changes, count);
  return count;
}

/**
 * Keeps a count read in the same statement as the list's counter, which read `changes`; the
 * least recently used goes first when full. A count kept under a later counter stays.
 */
export function keepCount(db: Database, key: string | null, changes: number | null, count: KnownCount): void {
  if (key === null || changes === null) return;
  let kept = perDatabase.get(db);
  if (!kept) perDatabase.set(db, (kept = new Map()));
  const held = kept.get(key);
  if (held && held.changes > changes) return;
  kept.delete(key);
  kept.set(key, { changes, total: count.total, viaTrigrams: count.viaTrigrams });
  if (kept.size > KEPT_COUNTS) kept.delete(kept.keys().next().value!);
}

/**
 * Keeps a fresh count for this process and, when the list holds SHARED_FROM files or more (a
 * count worth sparing), for every other one.
 */
export async function keepFreshCount(db: Database, key: string | null, q: CountedFilters, changes: number | null, listFiles: number, count: KnownCount): Promise<void> {
  keepCount(db, key, changes, count);
  if (key !== null && changes !== null && listFiles >= SHARED_FROM) await saveCount(db, key, q.userId, { changes, ...count });
}
