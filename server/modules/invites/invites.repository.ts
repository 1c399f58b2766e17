import { sql } from 'kysely';
import type { Database, Dialect } from '../../db/index.ts';
import { containsInsensitive } from '../../db/index.ts';

export interface InviteRow {
  id: string;
  invite_key: string;
  claimed: number;
  created_at: number;
  created_by_name: string | null;
  claimed_by_name: string | null;
}

export async function insertInvites(db: Database, rows: { id: string; invite_key: string; created_by: string; created_at: number }[]): Promise<void> {
  if (rows.length === 0) return;
  await db
    .insertInto('invites')
    .values(rows.map((r) => ({ ...r, claimed: 0, claimed_by: null, claimed_at: null, deleted_at: null })))
    .execute();
}

/**
 * A key that can still be claimed: it exists, nobody claimed it, nobody deleted it, and its
 * creator may still let someone in (a live account that is not banned: server/README.md
 * "Invites of banned or removed accounts"). A read without locks, for registration's cheap
 * checks; `creatorMayInvite` asks again inside the claim's transaction.
 */
export async function isClaimable(db: Database, inviteKey: string): Promise<boolean> {
  const row = await db
    .selectFrom('invites')
    // Inner join: a key whose creator's row is gone (removed, created_by nulled) matches nothing.
    .innerJoin('users as creator', 'creator.id', 'invites.created_by')
    .select('invites.id')
    .where('invites.invite_key', '=', inviteKey)
    .where('invites.claimed', '=', 0)
    .where('invites.deleted_at', 'is', null)
    .where('creator.banned', '=', 0)
    .where('creator.removing_since', 'is', null)
    .executeTakeFirst();
  return row !== undefined;
}

/**
 * Whether the creator of `inviteKey` may still let someone in: a live account, not banned.
 * Called in the transaction that claims the key, before the claim, so that a ban (or a removal)
 * and a registration with one of the user's keys are ordered one way or the other, never
 * interleaved. PostgreSQL: the creator's row is read `FOR SHARE`, as
 * `createSessionIfPasswordIs` reads the user it signs in (auth/caller.repository.ts): a ban under
 * way (its UPDATE holds the row) is waited for and then seen, and a ban that comes after this
 * read waits for the registration to commit, so it lands on an account that already exists.
 * The creator is locked before the invite row is, as a removal does (lockUser, then the cascade
 * that nulls its invites' `created_by`), so the two cannot deadlock. SQLite runs one transaction
 * at a time.
 */
export async function creatorMayInvite(trx: Database, dialect: Dialect, inviteKey: string): Promise<boolean> {
  const invite = await trx.selectFrom('invites').select('created_by').where('invite_key', '=', inviteKey).executeTakeFirst();
  if (!invite?.created_by) return false;
  const q = trx.selectFrom('users').select('banned').where('id', '=', invite.created_by).where('removing_since', 'is', null);
  const creator = await (dialect === 'postgres' ? q.forShare() : q).executeTakeFirst();
  return creator?.banned === 0;
}

/**
 * Claims a key for `userId` if it is still claimable; true when this call won it. The condition
 * sits in the UPDATE itself, so of concurrent claims only one changes the row (PostgreSQL
 * re-checks the WHERE after the first claimer commits; SQLite runs one writer at a time).
 */
export async function claimInvite(trx: Database, inviteKey: string, userId: string, now: number): Promise<boolean> {
  const res = await trx
    .updateTable('invites')
    .set({ claimed: 1, claimed_by: userId, claimed_at: now })
    .where('invite_key', '=', inviteKey)
    .where('claimed', '=', 0)
    .where('deleted_at', 'is', null)
    .executeTakeFirst();
  return Number(res.numUpdatedRows) === 1;
}

/** Keys a user generated since `since`, deleted ones included (design §6's weekly count). */
export async function countCreatedSince(db: Database, userId: string, since: number): Promise<number> {
  const row = await db
    .selectFrom('invites')
    .select((eb) => eb.fn.countAll().as('n'))
    .where('created_by', '=', userId)
    .where('created_at', '>=', since)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

export async function invitesAllowedFor(db: Database, roleName: string): Promise<number> {
  const row = await db.selectFrom('roles').select('invites_allowed').where('name', '=', roleName).executeTakeFirst();
  return row?.invites_allowed ?? 0;
}

export interface InviteListQuery {
  /** Only invites this user created (own invites); null for the admin's invite logs. */
  ownerId: string | null;
  inviteKey: string;
  createdBy: string;
  claimedBy: string;
  claimedFilter: 'all' | 'claimed' | 'unclaimed';
  offset: number;
  limit: number;
}

export async function listInvites(db: Database, q: InviteListQuery): Promise<{ rows: InviteRow[]; total: number }> {
  let base = db
    .selectFrom('invites as i')
    .leftJoin('users as creator', 'creator.id', 'i.created_by')
    .leftJoin('users as claimer', 'claimer.id', 'i.claimed_by')
    .where('i.deleted_at', 'is', null);
  if (q.ownerId !== null) base = base.where('i.created_by', '=', q.ownerId);
  if (q.inviteKey !== '') base = base.where(containsInsensitive(sql.ref('i.invite_key'), q.inviteKey));
  if (q.createdBy !== '') base = base.where(containsInsensitive(sql.ref('creator.username'), q.createdBy));
  if (q.claimedBy !== '') base = base.where(containsInsensitive(sql.ref('claimer.username'), q.claimedBy));
  if (q.claimedFilter !== 'all') base = base.where('i.claimed', '=', q.claimedFilter === 'claimed' ? 1 : 0);
  const countRow = await base.select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow();
  const rows = await base
    .select(['i.id', 'i.invite_key', 'i.claimed', 'i.created_at', 'creator.username as created_by_name', 'claimer.username as claimed_by_name'])
    .orderBy('i.created_at', 'desc')
    // Ids grow in the order they were made (lib/ids.ts): a batch made in one second lists newest first too.
    .orderBy('i.id', 'desc')
    .limit(q.limit)
    .offset(q.offset)
    .execute();
  return { rows, total: Number(countRow.n) };
}

/** Soft delete (the weekly count still sees the key); `ownerId` limits it to one user's keys. */
export async function softDeleteInvite(db: Database, id: string, ownerId: string | null, now: number): Promise<number> {
  let q = db.updateTable('invites').set({ deleted_at: now }).where('id', '=', id).where('deleted_at', 'is', null);
  if (ownerId !== null) q = q.where('created_by', '=', ownerId);
  const res = await q.executeTakeFirst();
  return Number(res.numUpdatedRows);
}
