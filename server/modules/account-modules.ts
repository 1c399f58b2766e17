import type { FastifyInstance } from 'fastify';
import type { Deps } from '../deps.ts';
import { registerAccountRoutes } from './account/account.routes.ts';
import { registerAdminRoutes } from './admin/admin.routes.ts';
import { registerAuthRoutes } from './auth/auth.routes.ts';
import { registerInviteRoutes } from './invites/invites.routes.ts';

/**
 * Accounts, invites, settings and administration (spec §7 but the file calls).
 * Each module adds its routes here.
 */
export async function registerAccountModules(app: FastifyInstance, deps: Deps): Promise<void> {
  await registerAuthRoutes(app, deps);
  await registerAccountRoutes(app, deps);
  await registerInviteRoutes(app, deps);
  await registerAdminRoutes(app, deps);
}
