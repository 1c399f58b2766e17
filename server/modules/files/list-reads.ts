import { sql } from 'kysely';
import type { Database } from '../../db/index.ts';
import type { FilesTable } from '../../db/schema.ts';
import type { FileSort } from '../../../contract/files.ts';
import { readBig } from '../../db/sqlite-off-thread.ts';
import { filtered, isPostgres, usersNamed, type FileFilters } from './file-filters.ts';
import { orderOf } from './list-anchors.ts';
import type { NameStats } from './name-probe.ts';
import type { NameRead } from './sqlite-name-plan.ts';
import type { walkedPageIds } from './list-by-name.ts';

/** The statements a page of a files list is made of: its count, its list's counter, its ids, its rows. */

export type FileRow = FilesTable & { username: string };

export interface FileQuery extends FileFilters {
  sort: NonNullable<FileSort>;
  page: number;
  pageSize: number;
}

/**
 * `totalImages` without counting rows when a kept count answers (migration 2026-11-22-20):
 * an owner's files, every file, or the files of the users a username filter picks. `changes`
 * comes with the owner's or the site's count (migration 2026-11-25-10), for the anchors.
 */
export async function countFiles(db: Database, q: FileFilters, stats?: NameStats, read?: NameRead, passes = 0): Promise<{ total: number; changes: number | null }> {
  if (!q.originalName && !q.actualName) {
    if (!q.username) {
      const list = await listState(db, q);
      return { total: list?.files ?? 0, changes: list?.changes ?? null };
    }
    if (!q.userId) {
      const row = await db
        .selectFrom('file_counts')
        .select((eb) => eb.fn.coalesce(eb.fn.sum<number>('file_count'), sql<number>`0`).as('n'))
        .where('file_counts.user_id', 'in', usersNamed(db, q.username))
        .executeTakeFirst();
      return { total: Number(row?.n ?? 0), changes: null };
    }
  }
  // `passes`: rows the count reads, in rows of a scan (SQLite: many go to a thread of their own).
  // The list's counter is read by the same statement, so it names exactly the rows counted
  // (name-counts.ts carries the count forward from it).
  const counted = filtered(db, q, stats, read).select((eb) => [eb.fn.countAll<number>().as('n'), listCounter(q).as('changes')]);
  const [count] = await readBig(db, counted, passes);
  return { total: Number(count?.n ?? 0), changes: count?.changes == null ? null : Number(count.changes) };
}

/** The `changes` counter of the list `q` filters (the owner's or the site's); null with a username filter, which no counter covers. */
function listCounter(q: FileFilters) {
  if (q.username) return sql<number | null>`null`;
  return q.userId
    ? sql<number | null>`(select c.changes from file_counts c where c.user_id = ${q.userId})`
    : sql<number | null>`(select t.changes from file_totals t where t.id = 1)`;
}

export interface ListState {
  files: number;
  changes: number;
}

/** The kept count and `changes` counter of an owner's list, or of the all-files list (none with a username filter). */
export async function listState(db: Database, q: FileFilters): Promise<ListState | null> {
  if (q.username) return null;
  const row = q.userId
    ? await db.selectFrom('file_counts').select(['file_count', 'changes']).where('user_id', '=', q.userId).executeTakeFirst()
    : await db.selectFrom('file_totals').select(['file_count', 'changes']).where('id', '=', 1).executeTakeFirst();
  return row ? { files: Number(row.file_count), changes: Number(row.changes) } : null;
}

/**
 * listState and the site's file count, which SQLite's name filter weighs the list against
 * (sqlite-name-plan.ts), read by one statement: on SQLite each statement holds the event loop.
 */
export async function listAndSiteState(db: Database, q: FileFilters): Promise<{ list: ListState | null; site: number }> {
  const owner = q.userId && !q.username ? q.userId : null;
  const row = await db
    .selectFrom('file_totals')
    // No owner: no row of file_counts joins (`= null` holds for none).
    .leftJoin('file_counts', (join) => join.on('file_counts.user_id', '=', owner))
    .select(['file_totals.file_count', 'file_totals.changes', 'file_counts.file_count as owner_files', 'file_counts.changes as owner_changes'])
    .where('file_totals.id', '=', 1)
    .executeTakeFirst();
  const site = Number(row?.file_count ?? 0);
  if (!row || q.username) return { list: null, site };
  if (!owner) return { list: { files: site, changes: Number(row.changes) }, site };
  return { list: row.owner_files == null ? null : { files: Number(row.owner_files), changes: Number(row.owner_changes) }, site };
}

/**
 * The ids of one page, read from an index that holds the sort key and the id (migration
 * 2026-11-22-21): even page 83,333 walks the index only, never the table. `stats`: see filtered.
 * `read`: see filtered; with 'scan' the matches are sorted, as no index gives their order.
 */
export function pageIdsQuery(db: Database, q: FileQuery, stats?: NameStats, read?: NameRead) {
  let ids = filtered(db, q, stats, read).select('files.id');
  // PostgreSQL, name filter: the page is sorted from the filter's matches, as SQLite's CROSS JOIN
  // does. Walking the sort index and filtering on the way looked cheaper to the planner, but when
  // the matches sit together ("holiday-1" of a million files, uploaded in one stretch) it walked
  // 800,000 rows for six (0.8 s); sorting the matches costs at most what counting them does.
  // `+ 0` is the same order in an expression no index holds. (When a known count says the walk
  // pays, the list walks a bounded stretch of the sort's index instead: list-by-name.ts walkedPageIds.)
  const fromMatches = read === 'scan' || (isPostgres(db) && Boolean(q.originalName || q.actualName));
  for (const [i, [column, direction]] of orderOf(q.sort).entries()) ids = ids.orderBy(fromMatches && i === 0 ? sql`${sql.ref(column)} + 0` : column, direction);
  return ids.limit(q.pageSize).offset((q.page - 1) * q.pageSize);
}

/** The rows of the page whose ids `ids` reads. `passes`: rows that reads, in rows of a scan (see countFiles). */
export async function pageRows(db: Database, q: FileQuery, ids: ReturnType<typeof pageIdsQuery> | ReturnType<typeof walkedPageIds>, passes = 0): Promise<FileRow[]> {
  let page = db.selectFrom('files').innerJoin('users', 'users.id', 'files.user_id').selectAll('files').select('users.username');
  for (const [column, direction] of orderOf(q.sort)) page = page.orderBy(column, direction);
  const rows = await readBig(db, page.where('files.id', 'in', ids), passes);
  return rows.map(normalize);
}

export function normalize<T extends FilesTable>(row: T): T {
  // node-postgres: bigint columns come back as numbers via the pool's parser, counts as strings.
  return { ...row, size: Number(row.size), time_created: Number(row.time_created) };
}
