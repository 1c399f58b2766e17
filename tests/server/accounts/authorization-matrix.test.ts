import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MESSAGES } from '../../../server/http/errors.ts';
import { createSession } from '../../../server/modules/auth/caller.repository.ts';
import { DIALECTS } from '../../helpers/test-app.ts';
import { createHttpTestApp, sendMultipart, type HttpTestApp } from '../../helpers/upload.ts';
import { snapshot } from './fixtures.ts';

/**
 * Issue 8 "Authorization matrix": every route the API registers × every kind of caller. The
 * expected access is written here, apart from the server's own declaration, and the route
 * table comes from the running server: a route added without a row here fails the first test.
 */
type Access = 'public' | 'user' | 'staff' | 'admin';
interface Row {
  access: Access;
  /** API keys may call it (design §6: uploads, own file list and deletes). */
  apiKey?: boolean;
  /** A harmless body: ids that exist nowhere, settings set to what they are. */
  body: Record<string, unknown>;
}

const ID = 'aaaaaaaaaaaaaaaaaaaaaaaa';
const UUID = '00000000-0000-4000-8000-000000000000';

const MATRIX: Record<string, Row> = {
  'POST /api/v1/auth/login': { access: 'public', body: { username: 'nobody', password: 'wrong-password' } },
  'POST /api/v1/auth/register': { access: 'public', body: { username: 'someone', password: 'password-1', invitekey: 'not-a-key' } },
  'POST /api/v1/auth/data': { access: 'user', body: {} },
  'POST /api/v1/auth/logout': { access: 'user', body: {} },
  'POST /api/v1/auth/apikeys': { access: 'user', body: {} },
  'POST /api/v1/auth/apikeys/generate': { access: 'user', body: {} },
  'POST /api/v1/auth/apikeys/revoke': { access: 'user', body: { apiKey: 'stash_not_a_key' } },
  'POST /api/v1/utils/settings': { access: 'user', body: {} },
  'POST /api/v1/utils/filesize': { access: 'user', body: {} },
  'POST /api/v1/utils/userstats': { access: 'user', body: {} },
  'POST /api/v1/utils/changeuser': { access: 'user', body: { newUsername: 'x' } },
  'POST /api/v1/utils/changepassword': { access: 'user', body: { currentPassword: 'wrong-password', newPassword: 'password-2' } },
  'POST /api/v1/utils/invites/invite-limit': { access: 'user', body: {} },
  'POST /api/v1/utils/invites': { access: 'user', body: {} },
  'POST /api/v1/manage/invites': { access: 'user', body: {} },
  'POST /api/v1/manage/inviteremoval': { access: 'user', body: { inviteKeyId: ID } },
  'POST /api/v1/files/upload': { access: 'user', apiKey: true, body: {} },
  'POST /api/v1/files/upload/status': { access: 'user', apiKey: true, body: { uploadId: UUID } },
  'POST /api/v1/files/upload/cancel': { access: 'user', apiKey: true, body: { uploadId: UUID } },
  'POST /api/v1/files/upload-url': { access: 'user', apiKey: true, body: { url: 'http://127.0.0.1:9/nothing' } },
  'POST /api/v1/files/uploaded': { access: 'user', apiKey: true, body: {} },
  'POST /api/v1/files/delete': { access: 'user', apiKey: true, body: { filePath: 'AAAAAAAAAA.png' } },
  'POST /api/v1/admin/get/uploaded': { access: 'staff', body: {} },
  'POST /api/v1/admin/update/delete': { access: 'staff', body: { filePath: 'AAAAAAAAAA.png' } },
  'POST /api/v1/admin/get/allstats': { access: 'admin', body: {} },
  'POST /api/v1/admin/get/roles': { access: 'admin', body: {} },
  'POST /api/v1/admin/get/mimetypes': { access: 'admin', body: {} },
  'POST /api/v1/admin/update/settings': { access: 'admin', body: { setting: 'allow_uploading', value: true } },
  'POST /api/v1/admin/update/mimetypes': { access: 'admin', body: { mimeTypes: 'text/csv' } },
  'POST /api/v1/admin/delete/mimetypes': { access: 'admin', body: { mimeType: 'text/x-not-listed' } },
  'POST /api/v1/admin/set/uploadlimit': { access: 'admin', body: { roleName: 'default', invitesAllowed: 1 } },
  'POST /api/v1/admin/set/maxfilesize': { access: 'admin', body: { value: 1024 } },
  'POST /api/v1/admin/get/limits': { access: 'admin', body: {} },
  'POST /api/v1/admin/set/limit': { access: 'admin', body: { setting: 'max_url_fetches', value: 3 } },
  'POST /api/v1/admin/set/storagequota': { access: 'admin', body: { roleName: 'default', quotaMb: 1_073_741_824 } },
  'POST /api/v1/admin/delete/storagequota': { access: 'admin', body: { roleName: 'default' } },
  'POST /api/v1/admin/get/users': { access: 'admin', body: {} },
  'POST /api/v1/admin/update/role': { access: 'admin', body: { userId: ID, newRole: 'mod' } },
  'POST /api/v1/admin/update/username': { access: 'admin', body: { targetUserId: ID, newUsername: 'renamed' } },
  'POST /api/v1/admin/update/userpass': { access: 'admin', body: { userId: ID, newPassword: 'password-2' } },
  'POST /api/v1/admin/set/ban': { access: 'admin', body: { userId: ID } },
  'POST /api/v1/admin/set/remove': { access: 'admin', body: { userId: ID } },
  'POST /api/v1/admin/get/invitelogs': { access: 'admin', body: {} },
  'POST /api/v1/admin/create/invites': { access: 'admin', body: { count: 1 } },
  'POST /api/v1/admin/set/inviteremove': { access: 'admin', body: { inviteKeyId: ID } },
  'GET /healthz': { access: 'public', body: {} },
  'HEAD /healthz': { access: 'public', body: {} },
};

type CallerKind = 'none' | 'bad token' | 'revoked token' | 'API key' | 'default' | 'trusted' | 'mod' | 'admin' | 'banned';
const CALLERS: CallerKind[] = ['none', 'bad token', 'revoked token', 'API key', 'default', 'trusted', 'mod', 'admin', 'banned'];
const RANK: Record<string, number> = { default: 0, trusted: 1, mod: 2, admin: 3 };

/** What design §5/§6 say this caller gets from this route: a refusal, or through. */
function expected(row: Row, who: CallerKind): { status: number; error: string } | 'allowed' {
  if (row.access === 'public') return 'allowed';
  if (who === 'none') return { status: 401, error: MESSAGES.signInRequired };
  if (who === 'bad token' || who === 'revoked token') return { status: 401, error: MESSAGES.sessionExpired };
  if (who === 'banned') return { status: 403, error: MESSAGES.banned };
  if (who === 'API key') return row.apiKey ? 'allowed' : { status: 403, error: 'API keys cannot be used for this call.' };
  const need = row.access === 'admin' ? 3 : row.access === 'staff' ? 2 : 0;
  return RANK[who]! >= need ? 'allowed' : { status: 403, error: MESSAGES.notAuthorized };
}

const AUTH_REFUSALS: string[] = [MESSAGES.signInRequired, MESSAGES.sessionExpired, MESSAGES.banned, MESSAGES.notAuthorized, 'API keys cannot be used for this call.'];

describe.each(DIALECTS)('authorization matrix on %s', (dialect) => {
  let t: HttpTestApp;
  const users: Record<string, { id: string }> = {};
  let apiKey = '';

  beforeAll(async () => {
    t = await createHttpTestApp(dialect);
    for (const role of ['default', 'trusted', 'mod'] as const) users[role] = await t.createUser({ role });
    users.admin = { id: t.admin.id };
    users.banned = await t.createUser({ banned: true });
    const keyOwner = await t.createUser();
    apiKey = (await t.call<{ apiKey: { key: string } }>('/api/v1/auth/apikeys/generate', {}, { token: keyOwner.token })).body.apiKey.key;
  });
  afterAll(async () => t?.close());

  /** A credential of this kind, fresh per call, so a route that signs out spends only its own session. */
  async function credential(who: CallerKind): Promise<string | null> {
    switch (who) {
      case 'none':
        return null;
      case 'bad token':
        return 'not-a-real-token-at-all';
      case 'API key':
        return apiKey;
      case 'revoked token': {
        const token = await createSession(t.deps.db, users.default!.id);
        expect((await t.call('/api/v1/auth/logout', {}, { token })).status).toBe(200);
        return token;
      }
      default:
        return createSession(t.deps.db, users[who]!.id);
    }
  }

  it('has a row for every route the server registers, with the access the server declares', () => {
    const registered = t.api.routeTable.map((r) => `${r.method} ${r.url}`);
    const missing = registered.filter((k) => !(k in MATRIX));
    expect(missing, 'routes without a row in the authorization matrix').toEqual([]);
    expect(Object.keys(MATRIX).filter((k) => !registered.includes(k)), 'rows for routes that no longer exist').toEqual([]);
    for (const r of t.api.routeTable) {
      if (!r.access) continue;
      const row = MATRIX[`${r.method} ${r.url}`]!;
      expect({ route: `${r.method} ${r.url}`, access: r.access.access, apiKey: r.access.apiKey ?? false }).toEqual({
        route: `${r.method} ${r.url}`,
        access: row.access,
        apiKey: row.apiKey ?? false,
      });
    }
  });

  it.each(Object.entries(MATRIX).filter(([k]) => k.startsWith('POST ')))('%s answers each kind of caller as design §6 says', async (key, row) => {
    const path = key.slice('POST '.length);
    for (const who of CALLERS) {
      const token = await credential(who);
      const before = await snapshot(t);
      const res = await t.call<{ success?: boolean; error?: unknown }>(path, row.body, token === null ? {} : { token });
      const want = expected(row, who);
      const label = `${path} as ${who}: ${res.status} ${JSON.stringify(res.body)}`;
      expect(res.status, label).toBeLessThan(500);
      if (want === 'allowed') {
        expect((res.status === 401 || res.status === 403) && AUTH_REFUSALS.includes(String(res.body.error)), label).toBe(false);
      } else {
        expect({ status: res.status, body: res.body }, label).toEqual({ status: want.status, body: { success: false, error: want.error } });
        // A refused call changes nothing (sessions of the revoked kind were spent before).
        expect(await snapshot(t), label).toBe(before);
      }
    }
  });

  it("no user reaches another user's files, uploads, invites or API keys by id", async () => {
    const owner = await t.createUser();
    const stranger = await t.createUser();
    await t.call('/api/v1/admin/set/uploadlimit', { roleName: 'default', invitesAllowed: 5 }, { token: t.admin.token });
    const file = await sendMultipart(`${t.apiUrl}/api/v1/files/upload`, { fields: { token: owner.token, originalname: 'mine.txt' }, file: { data: Buffer.from('private bytes') } });
    expect(file.status).toBe(200);
    const actual = (file.body.file as { actual_name: string }).actual_name;
    const uploadId = '11111111-1111-4111-8111-111111111111';
    const chunk = await sendMultipart(`${t.apiUrl}/api/v1/files/upload`, {
      fields: { token: owner.token, originalname: 'big.bin', totalChunks: 3, chunkIndex: 0, uploadId, fileSize: 3000 },
      file: { data: Buffer.alloc(1024, 1) },
    });
    expect(chunk.status, JSON.stringify(chunk.body)).toBe(200);
    const key = (await t.call<{ apiKey: { _id: string; key: string } }>('/api/v1/auth/apikeys/generate', {}, { token: owner.token })).body.apiKey;
    await t.call('/api/v1/utils/invites', {}, { token: owner.token });
    const invite = (await t.call<{ invites: { _id: string }[] }>('/api/v1/manage/invites', {}, { token: owner.token })).body.invites[0]!;

    const before = await snapshot(t);
    const attempts: [string, Record<string, unknown>][] = [
      ['/api/v1/files/delete', { filePath: actual }],
      ['/api/v1/files/delete', { filePath: `${t.filesUrl}/${actual}` }],
      ['/api/v1/files/upload/status', { uploadId }],
      ['/api/v1/files/upload/cancel', { uploadId }],
      ['/api/v1/auth/apikeys/revoke', { apiKey: key.key }],
      ['/api/v1/auth/apikeys/revoke', { apiKey: key._id }],
      ['/api/v1/manage/inviteremoval', { inviteKeyId: invite._id }],
    ];
    for (const [path, body] of attempts) {
      const res = await t.call(path, body, { token: stranger.token });
      expect(res.status, `${path} ${JSON.stringify(body)}: ${JSON.stringify(res.body)}`).toBe(404);
    }
    const theirList = await t.call<{ files: unknown[] }>('/api/v1/files/uploaded', {}, { token: stranger.token });
    expect(theirList.body.files).toEqual([]);
    expect((await t.call<{ invites: unknown[] }>('/api/v1/manage/invites', {}, { token: stranger.token })).body.invites).toEqual([]);
    expect((await t.call<{ apiKeys: unknown[] }>('/api/v1/auth/apikeys', {}, { token: stranger.token })).body.apiKeys).toEqual([]);
    expect(await snapshot(t)).toBe(before);
  });
});
