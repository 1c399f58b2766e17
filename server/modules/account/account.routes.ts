import type { FastifyInstance } from 'fastify';
import { utilsChangePassword, utilsChangeUser, utilsSettings } from '../../../contract/utils.ts';
import type { Deps } from '../../deps.ts';
import { post } from '../../http/route.ts';
import { renameUser } from '../users/users.service.ts';
import { changeOwnPassword } from './account.service.ts';

/** The signed-in user's own account (spec §2 /settings). */
export async function registerAccountRoutes(app: FastifyInstance, deps: Deps): Promise<void> {
  post(app, deps, utilsSettings, { access: 'user' }, async () => ({ success: true as const, settings: { ...(await deps.settings.get()) } }));

  post(app, deps, utilsChangeUser, { access: 'user' }, async ({ caller, body }) => {
    await renameUser(deps, caller.id, body.newUsername);
    return { success: true as const, message: 'Username updated successfully.' };
  });

  post(app, deps, utilsChangePassword, { access: 'user' }, async ({ caller, body }) => {
    await changeOwnPassword(deps, caller, body.currentPassword, body.newPassword);
    return { success: true as const, message: 'Password updated successfully.' };
  });
}
