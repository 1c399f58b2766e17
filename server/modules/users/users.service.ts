import type { Deps } from '../../deps.ts';
import { conflict, notFound } from '../../http/errors.ts';
import { hashPassword } from '../../lib/passwords.ts';
import { revokeUserSessions } from '../auth/caller.repository.ts';
import { findUserById, findUserByUsername, isUniqueViolation, updatePasswordHash, updateUsername, type UserRow } from './users.repository.ts';

/** Rules shared by a user acting on themselves (utils/*) and an admin acting on them (admin/*). */

export const USERNAME_TAKEN = 'That username is already taken.';
export const USER_NOT_FOUND = 'User not found.';

export async function requireUser(deps: Deps, id: string): Promise<UserRow> {
  const user = await findUserById(deps.db, id);
  if (!user) throw notFound(USER_NOT_FOUND);
  return user;
}

/** Design §6: names are unique without regard to case; a user may change the case of their own name. */
export async function renameUser(deps: Deps, id: string, newUsername: string): Promise<void> {
  const holder = await findUserByUsername(deps.db, newUsername);
  if (holder && holder.id !== id) throw conflict(USERNAME_TAKEN);
  try {
    if ((await updateUsername(deps.db, id, newUsername)) === 0) throw notFound(USER_NOT_FOUND);
  } catch (err) {
    // Two renames racing for one name: the unique index decides, the loser gets the same 409.
    if (isUniqueViolation(err)) throw conflict(USERNAME_TAKEN);
    throw err;
  }
}

/**
 * Sets a password and ends the user's sessions (design §6), but `keepSessionId`: an admin who
 * reset their own password stays signed in on this device. A user's own change compares and
 * sets instead (account/account.service.ts).
 */
export async function setPassword(deps: Deps, id: string, newPassword: string, keepSessionId: string | null): Promise<void> {
  const hash = await hashPassword(newPassword);
  // One transaction: a crash between the two never leaves the old sessions open under the new password.
  await deps.db.transaction().execute(async (trx) => {
    await updatePasswordHash(trx, id, hash);
    await revokeUserSessions(trx, id, keepSessionId);
  });
}
