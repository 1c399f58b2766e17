import { Type } from 'typebox';
import {
  AssignableRole,
  Body,
  ClaimedFilter,
  Filter,
  Id,
  Invite,
  Ok,
  Page,
  PageSize,
  Password,
  RoleName,
  SuccessOnly,
  Token,
  Username,
  endpoint,
} from './common.ts';
import { FileList, FileSort } from './files.ts';
export { MIME_PATTERN } from './mime-pattern.ts';

const TokenOnly = Body({ token: Token });

export const Role = Type.Object({ _id: Type.String(), name: RoleName, invites_allowed: Type.Integer() });
export const AdminUser = Type.Object({
  _id: Type.String(),
  username: Type.String(),
  role: RoleName,
  banned: Type.Boolean(),
  time_created: Type.Number(),
});
const Bucket = Type.Object({ count: Type.Number(), size: Type.Number() });
export const SiteStats = Type.Object({
  totalFilesUploaded: Type.Number(),
  totalStorageUsed: Type.Number(),
  totalUsers: Type.Number(),
  photos: Bucket,
  videos: Bucket,
  others: Bucket,
});

export const adminRoles = endpoint('/api/v1/admin/get/roles', TokenOnly, Type.Object({ success: Ok, roles: Type.Array(Role) }));
export const adminMimeTypes = endpoint(
  '/api/v1/admin/get/mimetypes',
  TokenOnly,
  Type.Object({ success: Ok, mimetypes: Type.Array(Type.String()) }),
);
export const adminAllStats = endpoint('/api/v1/admin/get/allstats', TokenOnly, Type.Object({ success: Ok, stats: SiteStats }));

export const adminUpdateSettings = endpoint(
  '/api/v1/admin/update/settings',
  Body({
    token: Token,
    setting: Type.Union([Type.Literal('allow_uploading'), Type.Literal('maintenance_mode')]),
    value: Type.Boolean(),
  }),
  SuccessOnly,
);

export const adminAddMimeTypes = endpoint(
  '/api/v1/admin/update/mimetypes',
  Body({ token: Token, mimeTypes: Type.String({ minLength: 1, maxLength: 8192 }) }),
  Type.Object({ success: Ok, mimetypes: Type.Array(Type.String()) }),
);
export const adminDeleteMimeType = endpoint(
  '/api/v1/admin/delete/mimetypes',
  Body({ token: Token, mimeType: Type.String({ minLength: 1, maxLength: 200 }) }),
  Type.Object({ success: Ok, mimetypes: Type.Array(Type.String()) }),
);
export const adminSetUploadLimit = endpoint(
  '/api/v1/admin/set/uploadlimit',
  Body({ token: Token, roleName: RoleName, invitesAllowed: Type.Integer({ minimum: 0, maximum: 100_000 }) }),
  SuccessOnly,
);
export const adminSetMaxFileSize = endpoint(
  '/api/v1/admin/set/maxfilesize',
  // In MB (spec §3); 1 MB .. 1 TB.
  Body({ token: Token, value: Type.Integer({ minimum: 1, maximum: 1_048_576 }) }),
  SuccessOnly,
);

/**
 * Per-user bounds (design §6, issue 8 item 4), sizes in MB. `storage_quota` is per role, null
 * meaning unlimited.
 */
export const UploadLimits = Type.Object({
  max_unfinished_uploads: Type.Integer(),
  max_unfinished_size: Type.Integer(),
  max_url_fetches: Type.Integer(),
  storage_quota: Type.Object({
    default: Type.Union([Type.Integer(), Type.Null()]),
    trusted: Type.Union([Type.Integer(), Type.Null()]),
    mod: Type.Union([Type.Integer(), Type.Null()]),
    admin: Type.Union([Type.Integer(), Type.Null()]),
  }),
});
export const adminLimits = endpoint('/api/v1/admin/get/limits', TokenOnly, Type.Object({ success: Ok, limits: UploadLimits }));
export const LimitName = Type.Union([Type.Literal('max_unfinished_uploads'), Type.Literal('max_unfinished_size'), Type.Literal('max_url_fetches')]);
export const adminSetLimit = endpoint(
  '/api/v1/admin/set/limit',
  // At least 1: a bound of 0 would close uploads, which allow_uploading already does with a clearer message.
  Body({ token: Token, setting: LimitName, value: Type.Integer({ minimum: 1, maximum: 1_048_576 }) }),
  SuccessOnly,
);
export const adminSetStorageQuota = endpoint(
  '/api/v1/admin/set/storagequota',
  // In MB, at least 1 (a quota of nothing is what allow_uploading is for).
  Body({ token: Token, roleName: RoleName, quotaMb: Type.Integer({ minimum: 1, maximum: 1_073_741_824 }) }),
  SuccessOnly,
);
/** Lifts a role's storage quota: unlimited again, the default. */
export const adminDeleteStorageQuota = endpoint('/api/v1/admin/delete/storagequota', Body({ token: Token, roleName: RoleName }), SuccessOnly);

export const UserSort = Type.Optional(
  Type.Union([Type.Literal('time_created_desc'), Type.Literal('time_created_asc'), Type.Literal('role')]),
);
export const RoleFilter = Type.Optional(
  Type.Union([Type.Literal(''), Type.Literal('default'), Type.Literal('trusted'), Type.Literal('mod')]),
);

export const adminUsers = endpoint(
  '/api/v1/admin/get/users',
  Body({
    token: Token,
    page: Page,
    limit: PageSize,
    query: Filter,
    sortBy: UserSort,
    roleFilter: RoleFilter,
    showBannedOnly: Type.Optional(Type.Boolean()),
  }),
  Type.Object({ success: Ok, users: Type.Array(AdminUser), totalPages: Type.Integer(), totalUsers: Type.Integer() }),
);

export const adminUpdateRole = endpoint(
  '/api/v1/admin/update/role',
  Body({ token: Token, userId: Id, newRole: AssignableRole }),
  SuccessOnly,
);
export const adminUpdateUsername = endpoint(
  '/api/v1/admin/update/username',
  Body({ token: Token, targetUserId: Id, newUsername: Username }),
  SuccessOnly,
);
export const adminUpdatePassword = endpoint(
  '/api/v1/admin/update/userpass',
  Body({ token: Token, userId: Id, newPassword: Password }),
  SuccessOnly,
);
/** Toggles the ban (spec §4: active and banned toggle by admin action). */
export const adminSetBan = endpoint(
  '/api/v1/admin/set/ban',
  Body({ token: Token, userId: Id }),
  Type.Object({ success: Ok, banned: Type.Boolean(), message: Type.Optional(Type.String()) }),
);
export const adminRemoveUser = endpoint('/api/v1/admin/set/remove', Body({ token: Token, userId: Id }), SuccessOnly);

export const adminUploaded = endpoint(
  '/api/v1/admin/get/uploaded',
  Body({
    token: Token,
    page: Page,
    pageSize: PageSize,
    filters: Type.Optional(
      Type.Object({ username: Filter, originalName: Filter, actualName: Filter }, { additionalProperties: false }),
    ),
    sort: FileSort,
  }),
  FileList,
);
export const adminDeleteFile = endpoint(
  '/api/v1/admin/update/delete',
  Body({ token: Token, filePath: Type.String({ minLength: 1, maxLength: 2048 }) }),
  SuccessOnly,
);

export const adminInviteLogs = endpoint(
  '/api/v1/admin/get/invitelogs',
  Body({
    token: Token,
    page: Page,
    limit: PageSize,
    filters: Type.Optional(
      Type.Object(
        { inviteKey: Filter, createdBy: Filter, claimedBy: Filter, claimedFilter: ClaimedFilter },
        { additionalProperties: false },
      ),
    ),
  }),
  Type.Object({ success: Ok, invites: Type.Array(Invite), totalPages: Type.Integer(), total: Type.Integer() }),
);
export const adminCreateInvites = endpoint(
  '/api/v1/admin/create/invites',
  Body({ token: Token, count: Type.Integer({ minimum: 1, maximum: 100 }) }),
  Type.Object({ success: Ok, inviteKeys: Type.Array(Type.String()) }),
);
export const adminRemoveInvite = endpoint(
  '/api/v1/admin/set/inviteremove',
  Body({ token: Token, inviteKeyId: Id }),
  SuccessOnly,
);
