import type { Database } from '../../db/index.ts';

/**
 * Issue 9, name filters no index narrows. The pager's total for a name filter is the count of
 * every match, and for a needle in 40 % of a million names (or one too short for trigrams) that
 * count reads the whole table: 0.33 s on SQLite, on the event loop, and 0.6 s on PostgreSQL. A
 * person who filters then pages through the matches (or whose list is asked for again) asks the
 * same count each time; this keeps it per process, checked against the list's `changes` counter
 * (the owner's, or the site's for the all-files list; migration 2026-11-25-10), which the
 * triggers bump with every insert and delete of the list's files in the same transaction. The
 * counter only grows, so a count stored beside the counter value read before it was counted is
 * never taken for a later list. Names never change once stored (no route renames a file; the
 * trigram table, kept by insert and delete triggers only, relies on it too).
 */

/** Counts kept per process: a few for each person filtering at once. */
export const KEPT_COUNTS = 256;

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
  return JSON.stringify([q.userId ?? null, q.originalName ?? '', q.actualName ?? '']);
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

/** Keeps a count read after the list's counter read `changes`; the least recently used goes first when full. */
export function keepCount(db: Database, key: string | null, changes: number | null, count: KnownCount): void {
  if (key === null || changes === null) return;
  let kept = perDatabase.get(db);
  if (!kept) perDatabase.set(db, (kept = new Map()));
  kept.delete(key);
  kept.set(key, { changes, total: count.total, viaTrigrams: count.viaTrigrams });
  if (kept.size > KEPT_COUNTS) kept.delete(kept.keys().next().value!);
}
