import { sql } from 'kysely';
import type { Database } from '../../db/index.ts';
import type { FilesTable } from '../../db/schema.ts';
import { OFF_THREAD_ROWS, readBig, startReadingOffThread } from '../../db/sqlite-off-thread.ts';
import { liveUsers } from '../users/users.repository.ts';
import { deleteFilesDooming } from './doomed-bytes.ts';
import { isPostgres } from './file-filters.ts';
import { adoptKeptAnchors, anchoredPageIds, listOfKey } from './list-anchors.ts';
import { loadLargestAnchors } from './list-anchors-store.ts';
import { listByNameOnPostgres, listByNameOnSqlite } from './list-by-name.ts';
import { countFiles, normalize, pageIdsQuery, pageRows, type FileQuery, type FileRow } from './list-reads.ts';
import { nameStats } from './name-probe.ts';

export async function insertFile(db: Database, row: FilesTable): Promise<void> {
  await db.insertInto('files').values(row).execute();
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

export async function listFiles(db: Database, q: FileQuery): Promise<{ rows: FileRow[]; total: number }> {
  const offset = (q.page - 1) * q.pageSize;
  if (q.originalName || q.actualName) return isPostgres(db) ? listByNameOnPostgres(db, q, offset) : listByNameOnSqlite(db, q, offset);
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

/** The file the files host serves under a name; an account being removed serves none (users/account-removals.ts). */
export async function findFileByActualName(db: Database, actualName: string): Promise<FileRow | undefined> {
  const row = await db
    .selectFrom('files')
    .innerJoin('users', 'users.id', 'files.user_id')
    .selectAll('files')
    .select('users.username')
    .where('files.actual_name', '=', actualName)
    .where('users.removing_since', 'is', null)
    .executeTakeFirst();
  return row ? normalize(row) : undefined;
}

/**
 * Deletes the row and says whether this call did it (a concurrent delete gets false); its bytes
 * are listed for files/doomed-bytes.ts by the same transaction.
 */
export async function deleteFileRow(db: Database, id: string): Promise<boolean> {
  return db.transaction().execute(async (trx) => (await deleteFilesDooming(trx, { id })) === 1);
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
  // Accounts being removed are no longer the site's (users/account-removals.ts).
  const users = await liveUsers(db).select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
  const pick = (kind: string): Bucket => {
    const r = rows.find((x) => x.kind === kind);
    return { count: Number(r?.count ?? 0), size: Number(r?.size ?? 0) };
  };
  const all = rows.reduce<Bucket>((acc, r) => ({ count: acc.count + Number(r.count), size: acc.size + Number(r.size) }), { count: 0, size: 0 });
  return { all, photos: pick('photos'), videos: pick('videos'), users: Number(users.n) };
}
