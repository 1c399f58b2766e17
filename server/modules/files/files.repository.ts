import { sql } from 'kysely';
import { containsInsensitive, type Database } from '../../db/index.ts';
import type { FilesTable } from '../../db/schema.ts';
import type { FileSort } from '../../../contract/files.ts';

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

/**
 * The filtered `files` rows, without joining users: the pager's count runs on this alone
 * (joining a million rows only to count them made the admin list 10× slower, bench/), and the
 * username filter is a subquery on the few users that match.
 */
function filtered(db: Database, q: FileFilters) {
  let query = db.selectFrom('files');
  if (q.userId) query = query.where('files.user_id', '=', q.userId);
  if (q.originalName) query = query.where(containsInsensitive(sql.ref('files.original_name'), q.originalName));
  if (q.actualName) query = query.where(containsInsensitive(sql.ref('files.actual_name'), q.actualName));
  if (q.username) {
    const matching = db.selectFrom('users').select('users.id').where(containsInsensitive(sql.ref('users.username'), q.username));
    query = query.where('files.user_id', 'in', matching);
  }
  return query;
}

export async function listFiles(db: Database, q: FileQuery): Promise<{ rows: FileRow[]; total: number }> {
  const count = await filtered(db, q).select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
  const total = Number(count.n);
  let rows = filtered(db, q).innerJoin('users', 'users.id', 'files.user_id').selectAll('files').select('users.username');
  // The id breaks ties so pages never repeat or skip a file between requests.
  if (q.sort === 'oldest') rows = rows.orderBy('files.time_created', 'asc').orderBy('files.id', 'asc');
  else if (q.sort === 'largest') rows = rows.orderBy('files.size', 'desc').orderBy('files.id', 'asc');
  else if (q.sort === 'smallest') rows = rows.orderBy('files.size', 'asc').orderBy('files.id', 'asc');
  else rows = rows.orderBy('files.time_created', 'desc').orderBy('files.id', 'desc');
  const result = await rows
    .limit(q.pageSize)
    .offset((q.page - 1) * q.pageSize)
    .execute();
  return { rows: result.map(normalize), total };
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

export async function userTotals(db: Database, userId: string): Promise<Bucket> {
  const row = await db
    .selectFrom('files')
    .select((eb) => [eb.fn.countAll<number>().as('count'), eb.fn.coalesce(eb.fn.sum<number>('size'), sql<number>`0`).as('size')])
    .where('user_id', '=', userId)
    .executeTakeFirstOrThrow();
  return { count: Number(row.count), size: Number(row.size) };
}

/** Spec §3 site stats: photos are image/*, videos video/*, everything else is "others". */
export async function siteTotals(db: Database): Promise<{ all: Bucket; photos: Bucket; videos: Bucket; users: number }> {
  const rows = await db
    .selectFrom('files')
    .select((eb) => [
      sql<string>`case when mime_type like 'image/%' then 'photos' when mime_type like 'video/%' then 'videos' else 'others' end`.as('kind'),
      eb.fn.countAll<number>().as('count'),
      eb.fn.coalesce(eb.fn.sum<number>('size'), sql<number>`0`).as('size'),
    ])
    .groupBy('kind')
    .execute();
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
