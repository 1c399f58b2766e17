import type { Deps } from '../../deps.ts';
import { badRequest } from '../../http/errors.ts';
import { verifyPassword } from '../../lib/passwords.ts';
import type { Caller } from '../auth/caller.repository.ts';
import { requireUser, setPassword } from '../users/users.service.ts';

export const WRONG_CURRENT_PASSWORD = 'Your current password is incorrect.';

/**
 * The current password must match (a stolen session alone cannot lock the owner out). Other
 * sessions end (design §6); the one that asked stays signed in.
 */
export async function changeOwnPassword(deps: Deps, caller: Caller, currentPassword: string, newPassword: string): Promise<void> {
  const user = await requireUser(deps, caller.id);
  // 400, not 401: the session is fine, and a 401 would sign the client out.
  if (!(await verifyPassword(user.password_hash, currentPassword))) throw badRequest(WRONG_CURRENT_PASSWORD);
  await setPassword(deps, caller.id, newPassword, caller.sessionId);
}
