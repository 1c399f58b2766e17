import { PostgresAdapter, sql } from 'kysely';
import { containsInsensitive, type Database } from '../../db/index.ts';
import { containsThroughPieces, DENSE_SHARE, lowerEachLetter, probePieces, sampleShare, type NameStats } from './name-probe.ts';
import type { NameRead } from './sqlite-name-plan.ts';

/** What a files list is narrowed to (spec §4 files list, §7 admin list). */
export interface FileFilters {
  userId?: string;
  /** Substrings, matched without regard to case (design §9); '' means no filter. */
  originalName?: string;
  actualName?: string;
  username?: string;
}

/** FTS5's trigram index finds substrings of 3 characters or more; shorter ones scan (migration 2026-11-22-21). */
const TRIGRAM = 3;

export function isPostgres(db: Database): boolean {
  return db.getExecutor().adapter instanceof PostgresAdapter;
}

/** SQLite: the FTS5 query for the filter's names of a trigram or more, or null when none is. */
export function trigramMatch(q: FileFilters): string | null {
  const phrase = (column: string, needle: string | undefined) =>
    needle && [...needle].length >= TRIGRAM ? `{${column}}: "${needle.replace(/"/g, '""')}"` : null;
  const phrases = [phrase('original_name', q.originalName), phrase('actual_name', q.actualName)].filter((p) => p !== null);
  return phrases.length > 0 ? phrases.join(' AND ') : null;
}

/**
 * The filtered `files` rows, without joining users: the pager's count runs on this alone
 * (joining a million rows only to count them made the admin list 10× slower, bench/), and the
 * username filter is a subquery on the few users that match.
 *
 * On SQLite a name filter starts from the FTS5 trigram table (a CROSS JOIN fixes that order, so
 * the planner never walks the owner's million rows instead); the `like` below still decides,
 * so the answers are exactly those of the plain scan. PostgreSQL's planner picks the pg_trgm
 * index for the `like` by itself; with `stats` it is asked only for the needle's rare pieces
 * (name-probe.ts). `read` (SQLite, sqlite-name-plan.ts): 'index' leaves the trigram table out,
 * 'scan' the owner's index too (`+` hides the column from the planner), so the table is read in
 * the order it is stored.
 */
export function filtered(db: Database, q: FileFilters, stats?: NameStats, read: NameRead = 'trigrams') {
  const match = isPostgres(db) || read !== 'trigrams' ? null : trigramMatch(q);
  let query = match
    ? // The join only narrows which `files` rows are read; every later clause names `files` alone,
      // so the builder is typed as the plain `files` query it stands for.
      (db
        .selectFrom('files_names')
        .crossJoin('files')
        .whereRef('files.actual_name', '=', 'files_names.actual_name')
        .where(sql<boolean>`files_names match ${match}`) as unknown as ReturnType<typeof plainFiles>)
    : plainFiles(db);
  if (q.userId) query = read === 'scan' ? query.where(sql<string>`+${sql.ref('files.user_id')}`, '=', q.userId) : query.where('files.user_id', '=', q.userId);
  if (q.originalName) query = query.where(nameContains('original_name', q.originalName, stats));
  if (q.actualName) query = query.where(nameContains('actual_name', q.actualName, stats));
  if (q.username) query = query.where('files.user_id', 'in', usersNamed(db, q.username));
  return query;
}

function nameContains(column: keyof NameStats, needle: string, stats: NameStats | undefined) {
  const ref = sql.ref(`files.${column}`);
  // PostgreSQL: pg_trgm cannot narrow a needle shorter than a trigram, yet the planner still took
  // its index for one, read all of it and rechecked every row (1.2 s to count "x" in a million
  // files, 0.47 s by a scan, 2026-12-02); `|| ''` is the same name in an expression no index holds.
  // A needle most names hold is read by a scan too (name-probe.ts DENSE_SHARE).
  if (stats && ([...needle].length < TRIGRAM || denseIn(stats[column], needle))) return containsInsensitive(sql`(${ref} || '')`, needle);
  const lowered = stats ? lowerEachLetter(needle) : null;
  const pieces = stats && lowered !== null ? probePieces(lowered, stats[column]) : null;
  return pieces ? containsThroughPieces(ref, needle, pieces) : containsInsensitive(ref, needle);
}

function denseIn(sample: NameStats[keyof NameStats], needle: string): boolean {
  return sampleShare(needle.toLowerCase(), sample) >= DENSE_SHARE;
}

/**
 * PostgreSQL: a name filter read by a scan (a needle too short for trigrams, or one the statistics
 * say most names hold), whose count is worth knowing before its page: sorting its matches would
 * be a second scan beside the count's.
 */
export function scannedFilter(q: FileFilters, stats: NameStats): boolean {
  const scanned = (needle: string | undefined, sample: NameStats[keyof NameStats]) => !!needle && ([...needle].length < TRIGRAM || denseIn(sample, needle));
  return scanned(q.originalName, stats.original_name) || scanned(q.actualName, stats.actual_name);
}

function plainFiles(db: Database) {
  return db.selectFrom('files');
}

export function usersNamed(db: Database, username: string) {
  return db.selectFrom('users').select('users.id').where(containsInsensitive(sql.ref('users.username'), username));
}
