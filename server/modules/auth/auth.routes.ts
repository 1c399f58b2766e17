import type { FastifyInstance } from 'fastify';
import { authApiKeys, authApiKeysGenerate, authApiKeysRevoke, authData, authLogin, authLogout, authRegister } from '../../../contract/auth.ts';
import type { Deps } from '../../deps.ts';
import { post } from '../../http/route.ts';
import { revokeSession } from './caller.repository.ts';
import { apiKeysOf, generateApiKey, login, register, revokeApiKey } from './auth.service.ts';

export async function registerAuthRoutes(app: FastifyInstance, deps: Deps): Promise<void> {
  // Design §6: auth/data and login stay open in maintenance, so the app can say why it is closed.
  post(app, deps, authData, { access: 'user', openInMaintenance: true }, async ({ caller }) => ({
    success: true as const,
    user: { _id: caller.id, username: caller.username, role: caller.role },
    maintenance: (await deps.settings.get()).maintenance_mode,
  }));

  post(
    app,
    deps,
    authLogin,
    { access: 'public', openInMaintenance: true, rateLimit: { max: 10, timeWindow: '1 minute', per: 'ip' } },
    async ({ body, request }) => ({ success: true as const, token: await login(deps, { ...body, ip: request.ip }) }),
  );

  post(app, deps, authRegister, { access: 'public', rateLimit: { max: 5, timeWindow: '1 minute', per: 'ip' } }, async ({ body, request }) => {
    await register(deps, { ...body, ip: request.ip });
    return { success: true as const, message: 'Account has been created!' };
  });

  // Signing out must work during maintenance too: it only ever takes access away.
  post(app, deps, authLogout, { access: 'user', openInMaintenance: true }, async ({ caller }) => {
    if (caller.sessionId) await revokeSession(deps.db, caller.sessionId);
    return { success: true as const, message: 'Signed out.' };
  });

  post(app, deps, authApiKeys, { access: 'user' }, async ({ caller }) => ({ success: true as const, apiKeys: await apiKeysOf(deps, caller.id) }));

  post(app, deps, authApiKeysGenerate, { access: 'user' }, async ({ caller }) => ({ success: true as const, apiKey: await generateApiKey(deps, caller.id) }));

  post(app, deps, authApiKeysRevoke, { access: 'user' }, async ({ caller, body }) => {
    await revokeApiKey(deps, caller.id, body.apiKey);
    return { success: true as const, message: 'API key revoked.' };
  });
}
