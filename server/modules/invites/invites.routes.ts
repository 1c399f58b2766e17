import type { FastifyInstance } from 'fastify';
import { manageInviteRemoval, manageInvites } from '../../../contract/invites.ts';
import { utilsGenerateInvite, utilsInviteLimit } from '../../../contract/utils.ts';
import type { Deps } from '../../deps.ts';
import { post } from '../../http/route.ts';
import { generateInvite, inviteLimit, pageOfInvites, removeInvite } from './invites.service.ts';

/** A user's own invites: the weekly allowance, generating one, listing and removing them. */
export async function registerInviteRoutes(app: FastifyInstance, deps: Deps): Promise<void> {
  post(app, deps, utilsInviteLimit, { access: 'user' }, async ({ caller }) => ({ success: true as const, ...(await inviteLimit(deps, caller)) }));

  // Design §6: invite generation is limited to 10 a minute.
  post(app, deps, utilsGenerateInvite, { access: 'user', rateLimit: { max: 10, timeWindow: '1 minute', per: 'account' } }, async ({ caller }) => ({
    success: true as const,
    message: 'Invite key generated.',
    inviteKey: await generateInvite(deps, caller),
  }));

  post(app, deps, manageInvites, { access: 'user' }, async ({ caller, body }) => ({
    success: true as const,
    ...(await pageOfInvites(deps, { page: body.page, limit: body.limit, ownerId: caller.id, filters: body.filters ?? {} })),
  }));

  post(app, deps, manageInviteRemoval, { access: 'user' }, async ({ caller, body }) => {
    await removeInvite(deps, body.inviteKeyId, caller.id);
    return { success: true as const, message: 'Invite removed.' };
  });
}
