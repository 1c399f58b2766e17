import { Type } from 'typebox';
import { Body, ClaimedFilter, Filter, Id, Invite, Ok, Page, PageSize, SuccessOnly, Token, endpoint } from './common.ts';

export const manageInvites = endpoint(
  '/api/v1/manage/invites',
  Body({
    token: Token,
    page: Page,
    limit: PageSize,
    filters: Type.Optional(
      Type.Object({ claimedFilter: ClaimedFilter, claimedBy: Filter }, { additionalProperties: false }),
    ),
  }),
  Type.Object({ success: Ok, invites: Type.Array(Invite), totalPages: Type.Integer(), total: Type.Integer() }),
);

export const manageInviteRemoval = endpoint(
  '/api/v1/manage/inviteremoval',
  Body({ token: Token, inviteKeyId: Id }),
  SuccessOnly,
);
