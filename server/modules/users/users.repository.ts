import { sql } from 'kysely';
import type { Database, Dialect } from '../../db/index.ts';
import { containsInsensitive } from '../../db/index.ts';
import { letDiskCatchUp } from '../../db/sqlite-write-pace.ts';
import { deleteFilesDooming, doomUploadsOfUser } from '../files/doomed-bytes.ts';

export interface UserRow {
  id: string;
  username: string;
  password_hash: string;
  role: string;
  banned: number;
  time_created: number;
}

const columns = ['id', 'username', 'password_hash', 'role', 'banned', 'time_created'] as const;

/** Accounts being removed (users/account-removals.ts) are found by no lookup: nobody signs in to one or acts on it. */
export function liveUsers(db: Database) {
  return db.selectFrom('users').where('removing_since', 'is', null);
}

export function findUserById(db: Database, id: string): Promise<UserRow | undefined> {
  return liveUsers(db).select(columns).where('id', '=', id).executeTakeFirst();
}

/**
 * Usernames are unique without regard to case (design §6), so lookups go through the lower-cased
 * copy. An account being removed holds its name until its row goes: the unique index still says
 * "taken" to a registration or a rename, as for any other account.
 */
export function findUserByUsername(db: Database, username: string): Promise<UserRow | undefined> {
  return liveUsers(db).select(columns).where('username_lower', '=', username.toLowerCase()).executeTakeFirst();
}

export async function insertUser(db: Database, user: UserRow): Promise<void> {
  await db
    .insertInto('users')
    .values({ ...user, username_lower: user.username.toLowerCase() })
    .execute();
}

/** Renames a live account: one being removed is acted on by nobody (liveUsers), so its rename counts 0 rows (a 404). */
export async function updateUsername(db: Database, id: string, username: string): Promise<number> {
  const res = await db
    .updateTable('users')
    .set({ username, username_lower: username.toLowerCase() })
    .where('id', '=', id)
    .where('removing_since', 'is', null)
    .executeTakeFirst();
  return Number(res.numUpdatedRows);
}

export async function updatePasswordHash(db: Database, id: string, passwordHash: string): Promise<void> {
  await db.updateTable('users').set({ password_hash: passwordHash }).where('id', '=', id).execute();
}

/**
 * Sets the hash only where it is still `checked`, the one a password was just verified against
 * (a compare-and-set); answers whether it did.
 */
export async function replacePasswordHash(db: Database, id: string, checked: string, passwordHash: string): Promise<boolean> {
  const res = await db.updateTable('users').set({ password_hash: passwordHash }).where('id', '=', id).where('password_hash', '=', checked).executeTakeFirst();
  return Number(res.numUpdatedRows) > 0;
}

export async function updateRole(db: Database, id: string, role: string): Promise<void> {
  await db.updateTable('users').set({ role }).where('id', '=', id).execute();
}

export async function setBanned(db: Database, id: string, banned: boolean): Promise<void> {
  await db.updateTable('users').set({ banned: banned ? 1 : 0 }).where('id', '=', id).execute();
}

/**
 * An account's files deleted per transaction when it goes. One transaction for all of them held
 * SQLite's event loop — every request of the process — for 10 s at 20,000 files and minutes past
 * it (the name index's delete trigger costs more the more deletes its transaction holds), and
 * PostgreSQL's row of the site's file count locked for as long, so every upload waited.
 */
const FILES_PER_TRANSACTION = 500;

/**
 * Deletes the account and everything it holds, its files a batch per transaction, and lists
 * their bytes for files/doomed-bytes.ts in the transaction that deletes their rows: whatever
 * happens next, nothing it stored stays in the store unlisted. A crash midway leaves the account
 * with fewer files, to be removed again. `between` runs after each full batch (tests hold it).
 */
export async function deleteUser(db: Database, dialect: Dialect, id: string, between: (db: Database) => Promise<void> = letDiskCatchUp): Promise<void> {
  while ((await db.transaction().execute((trx) => deleteFilesDooming(trx, { userId: id, limit: FILES_PER_TRANSACTION }))) === FILES_PER_TRANSACTION) {
    // Whatever else the process has to do runs between two batches, and on SQLite other
    // uploads' syncs do not queue behind the batches' writes (db/sqlite-write-pace.ts).
    await new Promise((resolve) => setImmediate(resolve));
    await between(db);
  }
  await db.transaction().execute(async (trx) => {
    // PostgreSQL: a file landing for the account now waits for this transaction (its row's
    // foreign key), and then finds no account, rather than being deleted unlisted by the cascade.
    await lockUser(trx, dialect, id);
    while ((await deleteFilesDooming(trx, { userId: id, limit: FILES_PER_TRANSACTION })) > 0);
    await doomUploadsOfUser(trx, id);
    await trx.deleteFrom('users').where('id', '=', id).execute();
    // The list log's entries name the user's files (id, size, time): gone with the account. The
    // lists they would have carried are walked again instead (files/list-anchors.ts).
    await trx.deleteFrom('file_list_log').where('user_id', '=', id).execute();
  });
}

/**
 * Serialises writers that act for one user inside a transaction (the weekly invite count).
 * SQLite already runs one transaction at a time; PostgreSQL needs the row lock.
 */
export async function lockUser(trx: Database, dialect: Dialect, id: string): Promise<void> {
  const q = trx.selectFrom('users').select('id').where('id', '=', id);
  await (dialect === 'postgres' ? q.forUpdate() : q).execute();
}

export interface UserListQuery {
  query: string;
  roleFilter: '' | 'default' | 'trusted' | 'mod';
  showBannedOnly: boolean;
  sortBy: 'time_created_desc' | 'time_created_asc' | 'role';
  offset: number;
  limit: number;
}

// Design §9: role order is admin, mod, trusted, default.
const roleRank = sql<number>`case users.role when 'admin' then 0 when 'mod' then 1 when 'trusted' then 2 else 3 end`;

export async function listUsers(db: Database, q: UserListQuery): Promise<{ rows: Omit<UserRow, 'password_hash'>[]; total: number }> {
  let base = liveUsers(db);
  if (q.query !== '') base = base.where(containsInsensitive(sql.ref('users.username'), q.query));
  if (q.roleFilter !== '') base = base.where('users.role', '=', q.roleFilter);
  if (q.showBannedOnly) base = base.where('users.banned', '=', 1);
  const countRow = await base.select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow();
  let rows = base.select(['users.id', 'users.username', 'users.role', 'users.banned', 'users.time_created']);
  const direction = q.sortBy === 'time_created_desc' ? 'desc' : 'asc';
  if (q.sortBy === 'role') rows = rows.orderBy(roleRank).orderBy('users.username_lower');
  else rows = rows.orderBy('users.time_created', direction);
  // The id breaks ties so a page boundary never shows a user twice or skips one; ids grow in the
  // order they were made (lib/ids.ts), so users of one second follow the time's direction too.
  rows = rows.orderBy('users.id', direction).limit(q.limit).offset(q.offset);
  return { rows: await rows.execute(), total: Number(countRow.n) };
}

/** A unique constraint said no (SQLite and PostgreSQL name it differently). */
export function isUniqueViolation(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return code === '23505' || code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY';
}
