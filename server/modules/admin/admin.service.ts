import type { FastifyBaseLogger } from 'fastify';
import { MIME_PATTERN } from '../../../contract/admin.ts';
import type { Deps } from '../../deps.ts';
import { badRequest, forbidden, notFound } from '../../http/errors.ts';
import { revokeUserSessions, type Caller } from '../auth/caller.repository.ts';
import { markForRemoval, settlesWithin } from '../users/account-removals.ts';
import { listUsers, setBanned, updateRole, type UserListQuery } from '../users/users.repository.ts';
import { USER_NOT_FOUND, requireUser, setPassword } from '../users/users.service.ts';
import { addMimeTypes, deleteMimeType, listRoles } from './admin.repository.ts';

const ROLE_ORDER = ['default', 'trusted', 'mod', 'admin'];

export async function roles(deps: Deps) {
  const rows = await listRoles(deps.db);
  rows.sort((a, b) => ROLE_ORDER.indexOf(a.name) - ROLE_ORDER.indexOf(b.name));
  return rows.map((r) => ({ _id: r.id, name: r.name as 'default' | 'trusted' | 'mod' | 'admin', invites_allowed: r.invites_allowed }));
}

const mimePattern = new RegExp(MIME_PATTERN);

/** Design §9: adds the comma-separated types; every entry must be `type/subtype` or `type/*`. */
export async function addMimes(deps: Deps, list: string): Promise<string[]> {
  const entries = [...new Set(list.split(',').map((m) => m.trim().toLowerCase()).filter((m) => m !== ''))];
  if (entries.length === 0) throw badRequest('Give at least one MIME type, such as image/png or image/*.');
  const bad = entries.find((m) => !mimePattern.test(m));
  // One bad entry refuses the whole list: half-applied input is harder to reason about.
  if (bad !== undefined) throw badRequest(`'${bad.slice(0, 100)}' is not a valid MIME type (use type/subtype or type/*).`);
  await addMimeTypes(deps.db, entries);
  deps.settings.invalidate();
  return deps.settings.mimeTypes();
}

export async function removeMime(deps: Deps, mime: string): Promise<string[]> {
  const normalised = mime.trim().toLowerCase();
  if ((await deleteMimeType(deps.db, normalised)) === 0) throw notFound(`'${normalised.slice(0, 100)}' is not in the allowed list.`);
  deps.settings.invalidate();
  return deps.settings.mimeTypes();
}

export interface UserPageRequest {
  page?: number;
  limit?: number;
  query?: string;
  sortBy?: UserListQuery['sortBy'];
  roleFilter?: UserListQuery['roleFilter'];
  showBannedOnly?: boolean;
}

/** Spec §9: 8 users per page unless asked otherwise. */
export async function pageOfUsers(deps: Deps, req: UserPageRequest) {
  const limit = req.limit ?? 8;
  const page = req.page ?? 1;
  const { rows, total } = await listUsers(deps.db, {
    query: req.query ?? '',
    roleFilter: req.roleFilter ?? '',
    showBannedOnly: req.showBannedOnly ?? false,
    sortBy: req.sortBy ?? 'time_created_desc',
    offset: (page - 1) * limit,
    limit,
  });
  return {
    users: rows.map((u) => ({
      _id: u.id,
      username: u.username,
      role: u.role as 'default' | 'trusted' | 'mod' | 'admin',
      banned: u.banned === 1,
      time_created: Number(u.time_created),
    })),
    totalPages: Math.ceil(total / limit),
    totalUsers: total,
  };
}

/**
 * Design §6: nobody becomes admin through the API and an admin cannot be demoted, banned or
 * deleted through it — which also keeps the last admin (and the caller) safe.
 */
async function requireActionableTarget(deps: Deps, caller: Caller, userId: string, what: string) {
  const target = await requireUser(deps, userId);
  if (target.id === caller.id) throw forbidden(`You cannot ${what} yourself.`);
  if (target.role === 'admin') throw forbidden(`You cannot ${what} an administrator.`);
  return target;
}

export async function changeRole(deps: Deps, caller: Caller, userId: string, newRole: 'default' | 'trusted' | 'mod'): Promise<void> {
  await requireActionableTarget(deps, caller, userId, 'change the role of');
  await updateRole(deps.db, userId, newRole);
}

/**
 * Toggles the ban (spec §4). A ban ends every session at once (design §6); API keys stop because
 * banned callers are refused. One transaction: a crash between the two would leave sessions that
 * work again after the unban. A sign-in under way reads the ban where it makes its session
 * (auth/caller.repository.ts createSessionIfPasswordIs), so none is made after the revocation.
 */
export async function toggleBan(deps: Deps, caller: Caller, userId: string): Promise<boolean> {
  const target = await requireActionableTarget(deps, caller, userId, 'ban');
  const banned = target.banned !== 1;
  await deps.db.transaction().execute(async (trx) => {
    await setBanned(trx, userId, banned);
    if (banned) await revokeUserSessions(trx, userId);
  });
  return banned;
}

/** An admin's own password resets keep their session; another admin's password is theirs to change. */
export async function resetPassword(deps: Deps, caller: Caller, userId: string, newPassword: string): Promise<void> {
  const target = await requireUser(deps, userId);
  if (target.role === 'admin' && target.id !== caller.id) throw forbidden("You cannot reset another administrator's password.");
  await setPassword(deps, userId, newPassword, target.id === caller.id ? caller.sessionId : null);
}

/**
 * Marks the user for removal — signed out, API keys gone, hidden from lists, sign-in and every
 * admin action — then waits for the removal while it is quick (users/account-removals.ts): the
 * rows go a batch at a time with their keys listed in doomed_bytes by the same transaction
 * (files/doomed-bytes.ts), so a crash delays the bytes' deletion instead of leaving them in the
 * store for good. A larger account is answered for while its removal goes on.
 */
export async function removeUser(deps: Deps, caller: Caller, userId: string, log: FastifyBaseLogger): Promise<void> {
  await requireActionableTarget(deps, caller, userId, 'delete');
  // Two admins removing the same account at once: the second finds it gone (404) or marked.
  if (!(await markForRemoval(deps.db, userId))) throw notFound(USER_NOT_FOUND);
  if (!(await settlesWithin(deps.accountRemovals.drain(), deps.accountRemovals.answerWithinMs))) log.info({ userId }, 'the account is hidden; its removal goes on after the answer');
}
