import type { Deps } from '../../deps.ts';
import { MESSAGES, badRequest, conflict, unauthorized } from '../../http/errors.ts';
import { hashPassword, verifyPassword } from '../../lib/passwords.ts';
import { revokeUserSessions, sessionExists, type Caller } from '../auth/caller.repository.ts';
import { lockUser, replacePasswordHash } from '../users/users.repository.ts';
import { requireUser } from '../users/users.service.ts';

export const WRONG_CURRENT_PASSWORD = 'Your current password is incorrect.';
export const PASSWORD_CHANGED_MEANWHILE = 'Your password was changed elsewhere while this change was checked, so it was not applied. Try again with the current password.';

/**
 * The current password must match (a stolen session alone cannot lock the owner out). Other
 * sessions end (design §6); the one that asked stays signed in.
 */
export async function changeOwnPassword(deps: Deps, caller: Caller, currentPassword: string, newPassword: string): Promise<void> {
  const user = await requireUser(deps, caller.id);
  // 400, not 401: the session is fine, and a 401 would sign the client out.
  if (!(await verifyPassword(user.password_hash, currentPassword))) throw badRequest(WRONG_CURRENT_PASSWORD);
  const hash = await hashPassword(newPassword);
  // Compare-and-set: an admin's reset (admin/update/userpass, the way to take an account back
  // from a stolen session), a ban or a logout may have landed while the password was checked, and
  // a blind write would undo it. The hash is replaced only if it is still the one checked, and
  // only while the asking session exists. The user's row is locked first (PostgreSQL; SQLite runs
  // one transaction at a time): a reset or ban under way is waited for and then seen, and one that
  // follows ends the session this change keeps (design §6).
  await deps.db.transaction().execute(async (trx) => {
    await lockUser(trx, deps.dialect, caller.id);
    // A reset, a ban or a logout ended it: 401, as any call with an ended session gets.
    if (!caller.sessionId || !(await sessionExists(trx, caller.sessionId))) throw unauthorized(MESSAGES.sessionExpired);
    // Still signed in, but the password is no longer the one given (the caller's own change from
    // this session, or an admin's reset of their own password, landed first): 409, not 401.
    if (!(await replacePasswordHash(trx, caller.id, user.password_hash, hash))) throw conflict(PASSWORD_CHANGED_MEANWHILE);
    await revokeUserSessions(trx, caller.id, caller.sessionId);
  });
}
