import { Type } from 'typebox';
import { Body, Ok, Password, SuccessMessage, Token, Username, endpoint } from './common.ts';

export const Settings = Type.Object({
  allow_uploading: Type.Boolean(),
  maintenance_mode: Type.Boolean(),
  max_file_size: Type.Number(),
});

export const UserStats = Type.Object({ totalFilesUploaded: Type.Number(), totalStorageUsed: Type.Number() });

export const utilsFileSize = endpoint(
  '/api/v1/utils/filesize',
  Body({ token: Token }),
  Type.Object({ success: Ok, maxFileSize: Type.Number() }),
);

export const utilsSettings = endpoint(
  '/api/v1/utils/settings',
  Body({ token: Token }),
  Type.Object({ success: Ok, settings: Settings }),
);

export const utilsUserStats = endpoint(
  '/api/v1/utils/userstats',
  Body({ token: Token }),
  Type.Object({ success: Ok, stats: UserStats }),
);

export const utilsChangeUser = endpoint(
  '/api/v1/utils/changeuser',
  Body({ token: Token, newUsername: Username }),
  SuccessMessage,
);

export const utilsChangePassword = endpoint(
  '/api/v1/utils/changepassword',
  Body({ token: Token, currentPassword: Type.String({ minLength: 1, maxLength: 256 }), newPassword: Password }),
  SuccessMessage,
);

export const utilsInviteLimit = endpoint(
  '/api/v1/utils/invites/invite-limit',
  Body({ token: Token }),
  Type.Object({
    success: Ok,
    remainingInvites: Type.Integer(),
    invitesAllowed: Type.Integer(),
    /** Seconds since epoch of the next Monday 00:00 UTC (design §6). */
    resetsAt: Type.Integer(),
  }),
);

export const utilsGenerateInvite = endpoint(
  '/api/v1/utils/invites',
  Body({ token: Token }),
  Type.Object({ success: Ok, message: Type.String(), inviteKey: Type.String() }),
);
