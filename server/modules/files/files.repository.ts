import { PostgresAdapter, sql } from 'kysely';
import { containsInsensitive, type Database } from '../../db/index.ts';
import type { FilesTable } from '../../db/schema.ts';
import type { FileSort } from '../../../contract/files.ts';
import { adoptKeptAnchors, anchoredPageIds, listOfKey, orderOf } from './list-anchors.ts';
import { loadLargestAnchors } from './list-anchors-store.ts';
import { containsThroughPieces, DENSE_SHARE, nameStats, probePieces, sampleShare, type NameStats } from './name-probe.ts';
import { LOOKUP_COST, countRead, pageRead, trigramCandidatesWorth, type NameRead } from './sqlite-name-plan.ts';
import { carriedCount, countKey, keepFreshCount, knownCount, type KnownCount } from './name-counts.ts';
import { OFF_THREAD_ROWS, readBig, startReadingOffThread } from '../../db/sqlite-off-thread.ts';

export type FileRow = FilesTable & { username: string };

export interface FileQuery {
  userId?: string;
  /** Substrings, matched without regard to case (design §9); '' means no filter. */
  originalName?: string;
  actualName?: string;
  username?: string;
  sort: NonNullable<FileSort>;
  page: number;
  pageSize: number;
}

export async function insertFile(db: Database, row: FilesTable): Promise<void> {
  await db.insertInto('files').values(row).execute();
}

type FileFilters = Omit<FileQuery, 'sort' | 'page' | 'pageSize'>;

/** FTS5's trigram index finds substrings of 3 characters or more; shorter ones scan (migration 2026-11-22-21). */
const TRIGRAM = 3;

function trigramMatch(q: FileFilters): string | null {
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
function filtered(db: Database, q: FileFilters, stats?: NameStats, read: NameRead = 'trigrams') {
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
  const pieces = stats ? probePieces(needle.toLowerCase(), stats[column]) : null;
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
function scannedFilter(q: FileFilters, stats: NameStats): boolean {
  const scanned = (needle: string | undefined, sample: NameStats[keyof NameStats]) => !!needle && ([...needle].length < TRIGRAM || denseIn(sample, needle));
  return scanned(q.originalName, stats.original_name) || scanned(q.actualName, stats.actual_name);
}

function plainFiles(db: Database) {
  return db.selectFrom('files');
}

function usersNamed(db: Database, username: string) {
  return db.selectFrom('users').select('users.id').where(containsInsensitive(sql.ref('users.username'), username));
}

function isPostgres(db: Database): boolean {
  return db.getExecutor().adapter instanceof PostgresAdapter;
}

/** Lists whose kept anchors a process takes at start, the largest first (each ≤ 1,000 anchors per million files). */
const PRELOADED_LISTS = 16;

/**
 * Issue 9, the first deep page of a freshly started process: the kept anchors of the largest
 * lists, read and carried to their lists' counters before the api listens, so that page reads
 * and carries none of them (bench/README.md). Returns how many lists were taken; a list whose
 * anchors cannot be carried is left to its first deep page, as before.
 */
export async function preloadListAnchors(db: Database, limit = PRELOADED_LISTS): Promise<number> {
  let taken = 0;
  // An owner's four sorts share one count: read once per owner (or once for the admin list).
  const counts = new Map<string, Promise<{ total: number; changes: number | null }>>();
  for (const stored of await loadLargestAnchors(db, limit)) {
    const list = listOfKey(stored.list);
    if (!list) continue;
    const owner = list.userId ?? '*';
    if (!counts.has(owner)) counts.set(owner, countFiles(db, list.userId ? { userId: list.userId } : {}));
    const { total, changes } = await counts.get(owner)!;
    if (changes !== null && (await adoptKeptAnchors(db, list, stored, changes, total))) taken++;
  }
  return taken;
}

/**
 * What a name filter needs, made ready before the api listens so its first request does not wait
 * for it: on PostgreSQL the names' statistics (name-probe.ts); on SQLite, for a site whose
 * whole-site reads go to the reading thread, that thread (its start held the event loop ~7 ms).
 */
export async function preloadNameFilters(db: Database): Promise<void> {
  if (isPostgres(db)) {
    await nameStats(db);
    return;
  }
  const kept = await db.selectFrom('file_totals').select('file_count').where('id', '=', 1).executeTakeFirst();
  if (Number(kept?.file_count ?? 0) >= OFF_THREAD_ROWS) startReadingOffThread(db);
}

/**
 * `totalImages` without counting rows when a kept count answers (migration 2026-11-22-20):
 * an owner's files, every file, or the files of the users a username filter picks. `changes`
 * comes with the owner's or the site's count (migration 2026-11-25-10), for the anchors.
 */
async function countFiles(db: Database, q: FileFilters, stats?: NameStats, read?: NameRead, passes = 0): Promise<{ total: number; changes: number | null }> {
  if (!q.originalName && !q.actualName) {
    if (q.userId && !q.username) {
      const row = await db.selectFrom('file_counts').select(['file_count', 'changes']).where('user_id', '=', q.userId).executeTakeFirst();
      return { total: Number(row?.file_count ?? 0), changes: row ? Number(row.changes) : null };
    }
    if (!q.userId && !q.username) {
      const row = await db.selectFrom('file_totals').select(['file_count', 'changes']).where('id', '=', 1).executeTakeFirst();
      return { total: Number(row?.file_count ?? 0), changes: row ? Number(row.changes) : null };
    }
    if (!q.userId) {
      const row = await db
        .selectFrom('file_counts')
        .select((eb) => eb.fn.coalesce(eb.fn.sum<number>('file_count'), sql<number>`0`).as('n'))
        .where('file_counts.user_id', 'in', usersNamed(db, q.username ?? ''))
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
  // pays, listFiles walks a bounded stretch of the sort's index instead: walkedPageIds.)
  const fromMatches = read === 'scan' || (isPostgres(db) && Boolean(q.originalName || q.actualName));
  for (const [i, [column, direction]] of orderOf(q.sort).entries()) ids = ids.orderBy(fromMatches && i === 0 ? sql`${sql.ref(column)} + 0` : column, direction);
  return ids.limit(q.pageSize).offset((q.page - 1) * q.pageSize);
}

export async function listFiles(db: Database, q: FileQuery): Promise<{ rows: FileRow[]; total: number }> {
  const offset = (q.page - 1) * q.pageSize;
  if (q.originalName || q.actualName) {
    if (!isPostgres(db)) return listByNameOnSqlite(db, q, offset);
    // The list's counter now, to find a count kept or carried for it (name-counts.ts).
    const key = countKey(q);
    const [stats, list] = await Promise.all([nameStats(db), key === null ? null : listState(db, q)]);
    let known = knownCount(db, key, list?.changes ?? null) ?? (await carriedCount(db, key, q, list?.changes ?? null));
    // A filter read by a scan: counted first, then its page read knowing the count — most often a
    // few rows of the sort's index — rather than sorting every match in a second scan beside the count.
    if (!known && scannedFilter(q, stats)) {
      const { total, changes } = await countFiles(db, q, stats);
      known = { total, viaTrigrams: false };
      await keepFreshCount(db, key, q, changes, list?.files ?? 0, known);
    }
    if (known) {
      if (offset >= known.total) return { rows: [], total: known.total };
      const walked = list ? sortIndexWalk(list.files, known.total, offset, q.pageSize) : null;
      if (list && walked !== null) {
        const rows = await pageRows(db, q, walkedPageIds(db, q, walked));
        // The walk met the page's rows within its rows, or read the whole list: the page. Else the
        // matches sit further on than their count said; they are sorted instead.
        if (rows.length === Math.min(q.pageSize, known.total - offset) || walked >= list.files) return { rows, total: known.total };
      }
      return { rows: await pageRows(db, q, pageIdsQuery(db, q, stats)), total: known.total };
    }
    // Both read the same few index matches, at once on two connections.
    const [{ total, changes }, rows] = await Promise.all([countFiles(db, q, stats), pageRows(db, q, pageIdsQuery(db, q, stats))]);
    await keepFreshCount(db, key, q, changes, list?.files ?? 0, { total, viaTrigrams: false });
    return { rows: offset >= total ? [] : rows, total };
  }
  const { total, changes } = await countFiles(db, q);
  // Past the last page there is nothing to read (and nothing to walk).
  if (offset >= total) return { rows: [], total };
  const list = q.username ? null : { userId: q.userId, sort: q.sort };
  const anchored = list && changes !== null ? await anchoredPageIds(db, list, changes, total, offset, q.pageSize) : null;
  if (anchored) {
    // No rows: the list changed since its count was read, and the anchors with it.
    const rows = await pageRows(db, q, anchored);
    if (rows.length > 0) return { rows, total };
  }
  return { rows: await pageRows(db, q, pageIdsQuery(db, q)), total };
}

/** SQLite, a name filter: from the trigram table while its candidates are few, else by the sort's index or a scan (sqlite-name-plan.ts). */
async function listByNameOnSqlite(db: Database, q: FileQuery, offset: number): Promise<{ rows: FileRow[]; total: number }> {
  const kept = await db.selectFrom('file_totals').select('file_count').where('id', '=', 1).executeTakeFirst();
  const site = Number(kept?.file_count ?? 0);
  // The list's counter now, to find a count kept or carried for it; a fresh count reads its own (name-counts.ts).
  const list = await listState(db, q);
  // A username filter's files are counted among the site's.
  const owner = list?.files ?? (q.userId ? 0 : site);
  const changes = list?.changes ?? null;
  const key = countKey(q);
  let count = knownCount(db, key, changes) ?? (await carriedCount(db, key, q, changes));
  if (!count) {
    const counted = await countByName(db, q, owner, site);
    await keepFreshCount(db, key, q, counted.changes, owner, counted);
    count = counted;
  }
  const { total } = count;
  if (offset >= total) return { rows: [], total };
  if (count.viaTrigrams) return { rows: await pageRows(db, q, pageIdsQuery(db, q), total * LOOKUP_COST), total };
  const read = pageRead(owner, site, total, offset, q.pageSize);
  return { rows: await pageRows(db, q, pageIdsQuery(db, q, undefined, read), read === 'scan' ? site : 0), total };
}

/** The kept count and `changes` counter of an owner's list, or of the all-files list (none with a username filter). */
async function listState(db: Database, q: FileFilters): Promise<{ files: number; changes: number } | null> {
  if (q.username) return null;
  const row = q.userId
    ? await db.selectFrom('file_counts').select(['file_count', 'changes']).where('user_id', '=', q.userId).executeTakeFirst()
    : await db.selectFrom('file_totals').select(['file_count', 'changes']).where('id', '=', 1).executeTakeFirst();
  return row ? { files: Number(row.file_count), changes: Number(row.changes) } : null;
}

/** How far past the average a walk to a page may read, and the least it reads. */
const WALK_SLACK = 4;
const LEAST_WALK = 1_000;

/**
 * PostgreSQL, a name filter whose count is known: the sort's index walked with each row checked
 * passes (offset + pageSize) × files / matches rows on average before its page is whole; sorting
 * the matches reads every one of them (400,000 for "png" in 40 % of a million names). Walk when
 * that costs less, a row read through the index counted as LOOKUP_COST read from pg_trgm's bitmap.
 * Matches that sit together ("img_2019" in photos uploaded together years ago) lie further on
 * than the average says: a walk of the whole list for them read 800,000 rows for six (0.6–0.7 s
 * per page, 2026-12-03). So the walk reads at most WALK_SLACK × the average (LEAST_WALK at
 * least), and the page is sorted from the matches when that was not enough: at most a quarter of
 * the sort's cost wasted. The rows to walk, or null when sorting the matches costs less.
 */
function sortIndexWalk(files: number, matches: number, offset: number, pageSize: number): number | null {
  const average = Math.ceil(((offset + pageSize) * files) / Math.max(1, matches));
  return average * LOOKUP_COST < matches ? Math.max(LEAST_WALK, WALK_SLACK * average) : null;
}

/**
 * The ids of one page of a name filter read by walking the first `rows` of the list in its order
 * (the sort's index) and checking each name; fewer than a page when the matches lie further on.
 */
export function walkedPageIds(db: Database, q: FileQuery, rows: number) {
  let walked = filtered(db, { userId: q.userId, username: q.username }).select(['files.id', 'files.time_created', 'files.size', 'files.original_name', 'files.actual_name']);
  for (const [column, direction] of orderOf(q.sort)) walked = walked.orderBy(column, direction);
  let page = db.selectFrom(walked.limit(rows).as('w')).select('w.id');
  // `|| ''`: the same name in an expression pg_trgm's index does not hold (nameContains).
  if (q.originalName) page = page.where(containsInsensitive(sql`(${sql.ref('w.original_name')} || '')`, q.originalName));
  if (q.actualName) page = page.where(containsInsensitive(sql`(${sql.ref('w.actual_name')} || '')`, q.actualName));
  for (const [column, direction] of orderOf(q.sort)) page = page.orderBy(sql.ref(column.replace('files.', 'w.')), direction);
  return page.limit(q.pageSize).offset((q.page - 1) * q.pageSize);
}

/** SQLite: a name filter's count, whether its page is read from the trigram table, and the list's counter read with the count. */
async function countByName(db: Database, q: FileQuery, owner: number, site: number): Promise<KnownCount & { changes: number | null }> {
  const match = trigramMatch(q);
  if (match) {
    const worth = trigramCandidatesWorth(site);
    const candidates = db.selectFrom('files_names').select(sql<number>`rowid`.as('r')).where(sql<boolean>`files_names match ${match}`).limit(worth).as('c');
    // Reading the candidates' postings held the event loop 17–27 ms at a million names ("png",
    // "holiday"): as many go to the reading thread as a scan of that size would.
    const [seen] = await readBig(db, db.selectFrom(candidates).select((eb) => eb.fn.countAll<number>().as('n')), worth);
    if (seen && Number(seen.n) < worth) return { ...(await countFiles(db, q, undefined, undefined, Number(seen.n) * LOOKUP_COST)), viaTrigrams: true };
  }
  const read = countRead(owner, site);
  return { ...(await countFiles(db, q, undefined, read, read === 'scan' ? site : owner * LOOKUP_COST)), viaTrigrams: false };
}

/** `passes`: rows the page reads, in rows of a scan (see countFiles). */
async function pageRows(db: Database, q: FileQuery, ids: ReturnType<typeof pageIdsQuery> | ReturnType<typeof walkedPageIds>, passes = 0): Promise<FileRow[]> {
  let page = db.selectFrom('files').innerJoin('users', 'users.id', 'files.user_id').selectAll('files').select('users.username');
  for (const [column, direction] of orderOf(q.sort)) page = page.orderBy(column, direction);
  const rows = await readBig(db, page.where('files.id', 'in', ids), passes);
  return rows.map(normalize);
}

export async function findFileByActualName(db: Database, actualName: string): Promise<FileRow | undefined> {
  const row = await db
    .selectFrom('files')
    .innerJoin('users', 'users.id', 'files.user_id')
    .selectAll('files')
    .select('users.username')
    .where('files.actual_name', '=', actualName)
    .executeTakeFirst();
  return row ? normalize(row) : undefined;
}

/** Deletes the row and says whether this call did it (a concurrent delete gets false). */
export async function deleteFileRow(db: Database, id: string): Promise<boolean> {
  const res = await db.deleteFrom('files').where('id', '=', id).executeTakeFirst();
  return Number(res.numDeletedRows) === 1;
}

export interface Bucket {
  count: number;
  size: number;
}

/**
 * A user's count and bytes. The sum reads every one of their files (a million: ~0.1 s on SQLite),
 * so on SQLite a large account's is read off the event loop (db/sqlite-off-thread.ts), sized by its
 * kept count.
 */
export async function userTotals(db: Database, userId: string): Promise<Bucket> {
  const kept = await db.selectFrom('file_counts').select('file_count').where('user_id', '=', userId).executeTakeFirst();
  const totals = db
    .selectFrom('files')
    .select((eb) => [eb.fn.countAll<number>().as('count'), eb.fn.coalesce(eb.fn.sum<number>('size'), sql<number>`0`).as('size')])
    .where('user_id', '=', userId);
  const [row] = await readBig(db, totals, Number(kept?.file_count ?? 0));
  return { count: Number(row?.count ?? 0), size: Number(row?.size ?? 0) };
}

/** Spec §3 site stats: photos are image/*, videos video/*, everything else is "others". Reads every file, off SQLite's event loop on a large site (see userTotals). */
export async function siteTotals(db: Database): Promise<{ all: Bucket; photos: Bucket; videos: Bucket; users: number }> {
  const kept = await db.selectFrom('file_totals').select('file_count').where('id', '=', 1).executeTakeFirst();
  const byKind = db
    .selectFrom('files')
    .select((eb) => [
      sql<string>`case when mime_type like 'image/%' then 'photos' when mime_type like 'video/%' then 'videos' else 'others' end`.as('kind'),
      eb.fn.countAll<number>().as('count'),
      eb.fn.coalesce(eb.fn.sum<number>('size'), sql<number>`0`).as('size'),
    ])
    .groupBy('kind');
  const rows = await readBig(db, byKind, Number(kept?.file_count ?? 0));
  const users = await db.selectFrom('users').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
  const pick = (kind: string): Bucket => {
    const r = rows.find((x) => x.kind === kind);
    return { count: Number(r?.count ?? 0), size: Number(r?.size ?? 0) };
  };
  const all = rows.reduce<Bucket>((acc, r) => ({ count: acc.count + Number(r.count), size: acc.size + Number(r.size) }), { count: 0, size: 0 });
  return { all, photos: pick('photos'), videos: pick('videos'), users: Number(users.n) };
}

function normalize<T extends FilesTable>(row: T): T {
  // node-postgres: bigint columns come back as numbers via the pool's parser, counts as strings.
  return { ...row, size: Number(row.size), time_created: Number(row.time_created) };
}
