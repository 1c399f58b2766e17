import { sql } from 'kysely';
import { containsInsensitive, type Database } from '../../db/index.ts';
import { readBig } from '../../db/sqlite-off-thread.ts';
import { filtered, scannedFilter, trigramMatch } from './file-filters.ts';
import { orderOf } from './list-anchors.ts';
import { countFiles, listAndSiteState, listState, pageIdsQuery, pageRows, type FileQuery, type FileRow } from './list-reads.ts';
import { carriedCount, countKey, keepFreshCount, knownCount, type KnownCount } from './name-counts.ts';
import { nameStats } from './name-probe.ts';
import { LOOKUP_COST, countRead, pageRead, trigramCandidatesWorth } from './sqlite-name-plan.ts';

/** A page of a files list filtered by name (design §9), with the filter's count: each database's own way to it. */

/** PostgreSQL: from pg_trgm's index while the matches are few, else counted first and walked to or sorted. */
export async function listByNameOnPostgres(db: Database, q: FileQuery, offset: number): Promise<{ rows: FileRow[]; total: number }> {
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

/** SQLite: from the trigram table while its candidates are few, else by the sort's index or a scan (sqlite-name-plan.ts). */
export async function listByNameOnSqlite(db: Database, q: FileQuery, offset: number): Promise<{ rows: FileRow[]; total: number }> {
  // The list's counter now, to find a count kept or carried for it; a fresh count reads its own (name-counts.ts).
  const { list, site } = await listAndSiteState(db, q);
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
  // `|| ''`: the same name in an expression pg_trgm's index does not hold (file-filters.ts nameContains).
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
