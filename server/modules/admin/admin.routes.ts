import type { FastifyInstance } from 'fastify';
import {
  adminAddMimeTypes,
  adminCreateInvites,
  adminDeleteStorageQuota,
  adminDeleteMimeType,
  adminInviteLogs,
  adminLimits,
  adminMimeTypes,
  adminRemoveInvite,
  adminRemoveUser,
  adminRoles,
  adminSetBan,
  adminSetLimit,
  adminSetMaxFileSize,
  adminSetStorageQuota,
  adminSetUploadLimit,
  adminUpdatePassword,
  adminUpdateRole,
  adminUpdateSettings,
  adminUpdateUsername,
  adminUsers,
} from '../../../contract/admin.ts';
import type { Deps } from '../../deps.ts';
import { notFound } from '../../http/errors.ts';
import { post } from '../../http/route.ts';
import { createInvites, pageOfInvites, removeInvite } from '../invites/invites.service.ts';
import { saveUploadSize } from '../settings/upload-sizes.ts';
import { renameUser } from '../users/users.service.ts';
import { setInvitesAllowed } from './admin.repository.ts';
import { addMimes, changeRole, pageOfUsers, removeMime, removeUser, resetPassword, roles, toggleBan } from './admin.service.ts';

/** Admin calls of spec §7 (all but the two file calls). Design §6: admin only; mods get 403. */
export async function registerAdminRoutes(app: FastifyInstance, deps: Deps): Promise<void> {
  const admin = { access: 'admin' } as const;

  post(app, deps, adminRoles, admin, async () => ({ success: true as const, roles: await roles(deps) }));

  post(app, deps, adminMimeTypes, admin, async () => ({ success: true as const, mimetypes: await deps.settings.mimeTypes() }));

  post(app, deps, adminUpdateSettings, admin, async ({ body }) => {
    await deps.settings.set(body.setting, body.value);
    return { success: true as const, message: 'Setting updated.' };
  });

  post(app, deps, adminAddMimeTypes, admin, async ({ body }) => ({ success: true as const, mimetypes: await addMimes(deps, body.mimeTypes) }));

  post(app, deps, adminDeleteMimeType, admin, async ({ body }) => ({ success: true as const, mimetypes: await removeMime(deps, body.mimeType) }));

  post(app, deps, adminSetUploadLimit, admin, async ({ body }) => {
    if ((await setInvitesAllowed(deps.db, body.roleName, body.invitesAllowed)) === 0) throw notFound('Role not found.');
    return { success: true as const, message: 'Weekly invite limit updated.' };
  });

  post(app, deps, adminSetMaxFileSize, admin, async ({ body }) => {
    await saveUploadSize(deps, 'max_file_size', body.value);
    return { success: true as const, message: 'Maximum file size updated.' };
  });

  // Design §6 per-user bounds (issue 8 item 4).
  post(app, deps, adminLimits, admin, async () => ({ success: true as const, limits: await deps.settings.limits() }));

  post(app, deps, adminSetLimit, admin, async ({ body }) => {
    // The unfinished bound must hold the largest file and a whole chunk (settings/upload-sizes.ts).
    if (body.setting === 'max_unfinished_size') await saveUploadSize(deps, body.setting, body.value);
    else await deps.settings.setLimit(body.setting, body.value);
    return { success: true as const, message: 'Limit updated.' };
  });

  post(app, deps, adminSetStorageQuota, admin, async ({ body }) => {
    await deps.settings.setStorageQuota(body.roleName, body.quotaMb);
    return { success: true as const, message: 'Storage quota updated.' };
  });

  post(app, deps, adminDeleteStorageQuota, admin, async ({ body }) => {
    await deps.settings.setStorageQuota(body.roleName, null);
    return { success: true as const, message: 'Storage quota lifted.' };
  });

  post(app, deps, adminUsers, admin, async ({ body }) => ({ success: true as const, ...(await pageOfUsers(deps, body)) }));

  post(app, deps, adminUpdateRole, admin, async ({ caller, body }) => {
    await changeRole(deps, caller, body.userId, body.newRole);
    return { success: true as const, message: 'Role updated.' };
  });

  post(app, deps, adminUpdateUsername, admin, async ({ body }) => {
    await renameUser(deps, body.targetUserId, body.newUsername);
    return { success: true as const, message: 'Username updated.' };
  });

  post(app, deps, adminUpdatePassword, admin, async ({ caller, body }) => {
    await resetPassword(deps, caller, body.userId, body.newPassword);
    return { success: true as const, message: 'Password updated.' };
  });

  post(app, deps, adminSetBan, admin, async ({ caller, body }) => {
    const banned = await toggleBan(deps, caller, body.userId);
    return { success: true as const, banned, message: banned ? 'User banned.' : 'User unbanned.' };
  });

  post(app, deps, adminRemoveUser, admin, async ({ caller, body, request }) => {
    await removeUser(deps, caller, body.userId, request.log);
    return { success: true as const, message: 'User deleted.' };
  });

  post(app, deps, adminInviteLogs, admin, async ({ body }) => ({
    success: true as const,
    ...(await pageOfInvites(deps, { page: body.page, limit: body.limit, ownerId: null, filters: body.filters ?? {} })),
  }));

  post(app, deps, adminCreateInvites, admin, async ({ caller, body }) => ({ success: true as const, inviteKeys: await createInvites(deps, caller, body.count) }));

  post(app, deps, adminRemoveInvite, admin, async ({ body }) => {
    await removeInvite(deps, body.inviteKeyId, null);
    return { success: true as const, message: 'Invite removed.' };
  });
}
