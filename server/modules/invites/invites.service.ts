import type { Invite } from '../../../contract/common.ts';
import type { Deps } from '../../deps.ts';
import { HttpError, notFound } from '../../http/errors.ts';
import { newId, newSecret, nowSeconds } from '../../lib/ids.ts';
import type { Caller } from '../auth/caller.repository.ts';
import { lockUser } from '../users/users.repository.ts';
import {
  countCreatedSince,
  insertInvites,
  invitesAllowedFor,
  listInvites,
  softDeleteInvite,
  type InviteListQuery,
  type InviteRow,
} from './invites.repository.ts';

const DAY = 86_400;
export const INVITE_NOT_FOUND = 'Invite not found.';

/** Monday 00:00 UTC of the week holding `now` (design §6: the weekly count starts there). */
export function weekStart(now: number): number {
  const d = new Date(now * 1000);
  const midnight = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate()) / 1000;
  const daysSinceMonday = (d.getUTCDay() + 6) % 7;
  return midnight - daysSinceMonday * DAY;
}

/** Invite keys are secrets a stranger must not guess: 120 random bits, URL-safe. */
export function newInviteKey(): string {
  return newSecret(15);
}

export interface InviteLimit {
  remainingInvites: number;
  invitesAllowed: number;
  resetsAt: number;
}

export async function inviteLimit(deps: Deps, caller: Caller, now = nowSeconds()): Promise<InviteLimit> {
  const start = weekStart(now);
  const invitesAllowed = await invitesAllowedFor(deps.db, caller.role);
  const used = await countCreatedSince(deps.db, caller.id, start);
  return { remainingInvites: Math.max(0, invitesAllowed - used), invitesAllowed, resetsAt: start + 7 * DAY };
}

/**
 * Spec §8's two limit messages: a role allowed N > 0 keys that used them all is told N; a role
 * allowed none is told it has reached its limit. Both are 403 (design §9).
 */
export function limitMessage(invitesAllowed: number): string {
  return invitesAllowed > 0 ? `You may only generate ${invitesAllowed} invite keys this week.` : 'You have reached your weekly invite limit.';
}

export async function generateInvite(deps: Deps, caller: Caller): Promise<string> {
  const key = newInviteKey();
  await deps.db.transaction().execute(async (trx) => {
    // Count and insert under the user's row lock, so two requests at once cannot both take the last key.
    await lockUser(trx, deps.dialect, caller.id);
    const now = nowSeconds();
    const invitesAllowed = await invitesAllowedFor(trx, caller.role);
    const used = await countCreatedSince(trx, caller.id, weekStart(now));
    if (used >= invitesAllowed) throw new HttpError(403, limitMessage(invitesAllowed));
    await insertInvites(trx, [{ id: newId(), invite_key: key, created_by: caller.id, created_at: now }]);
  });
  return key;
}

/** Admins create keys outside any weekly limit (spec §6: create and remove invites). */
export async function createInvites(deps: Deps, caller: Caller, count: number): Promise<string[]> {
  const now = nowSeconds();
  const rows = Array.from({ length: count }, () => ({ id: newId(), invite_key: newInviteKey(), created_by: caller.id, created_at: now }));
  await insertInvites(deps.db, rows);
  return rows.map((r) => r.invite_key);
}

function toInvite(row: InviteRow): Invite {
  return {
    _id: row.id,
    inviteKey: row.invite_key,
    createdBy: row.created_by_name,
    claimed: row.claimed === 1,
    claimedBy: row.claimed_by_name,
    createdAt: Number(row.created_at),
  };
}

export interface InvitePageRequest {
  page?: number;
  limit?: number;
  ownerId: string | null;
  filters: { inviteKey?: string; createdBy?: string; claimedBy?: string; claimedFilter?: string };
}

/** Spec §9: invite lists show 8 per page unless asked otherwise. */
export async function pageOfInvites(deps: Deps, req: InvitePageRequest): Promise<{ invites: Invite[]; totalPages: number; total: number }> {
  const limit = req.limit ?? 8;
  const page = req.page ?? 1;
  const f = req.filters;
  const claimedFilter: InviteListQuery['claimedFilter'] = f.claimedFilter === 'claimed' || f.claimedFilter === 'unclaimed' ? f.claimedFilter : 'all';
  const { rows, total } = await listInvites(deps.db, {
    ownerId: req.ownerId,
    inviteKey: f.inviteKey ?? '',
    createdBy: f.createdBy ?? '',
    claimedBy: f.claimedBy ?? '',
    claimedFilter,
    offset: (page - 1) * limit,
    limit,
  });
  return { invites: rows.map(toInvite), totalPages: Math.ceil(total / limit), total };
}

/** Removes an invite; `ownerId` null means any invite (admin), else only the owner's own. */
export async function removeInvite(deps: Deps, id: string, ownerId: string | null): Promise<void> {
  // Someone else's key answers as missing, so ids cannot be probed.
  if ((await softDeleteInvite(deps.db, id, ownerId, nowSeconds())) === 0) throw notFound(INVITE_NOT_FOUND);
}
