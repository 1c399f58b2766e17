import type { ResponseOf } from '../../../contract/common.ts';
import type { adminInviteLogs, adminRoles, adminUploaded, adminUsers } from '../../../contract/admin.ts';

export type AdminUserRow = ResponseOf<typeof adminUsers>['users'][number];
export type AdminFileRow = ResponseOf<typeof adminUploaded>['files'][number];
export type InviteRow = ResponseOf<typeof adminInviteLogs>['invites'][number];
export type RoleRow = ResponseOf<typeof adminRoles>['roles'][number];

/** Spec §4: an admin picks default, trusted or mod; admin is not selectable. */
export const ASSIGNABLE_ROLES = ['default', 'trusted', 'mod'] as const;
export type AssignableRole = (typeof ASSIGNABLE_ROLES)[number];

/** Spec §9 page sizes. */
export const USERS_PAGE_SIZE = 8;
export const FILES_PAGE_SIZE = 6;
export const INVITES_PAGE_SIZE = 8;

export const GENERAL_FAILURE = 'An internal error occurred.';
