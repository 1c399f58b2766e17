import { Readable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { newId, nowSeconds } from '../../../server/lib/ids.ts';
import { markForRemoval } from '../../../server/modules/users/account-removals.ts';
import { DIALECTS, createTestApp, type TestApp } from '../../helpers/test-app.ts';
import { snapshot } from './fixtures.ts';

interface UserOut {
  _id: string;
  username: string;
  role: string;
  banned: boolean;
  time_created: number;
}

describe.each(DIALECTS)('admin calls on %s', (dialect) => {
  let t: TestApp;
  afterEach(async () => t?.close());
  const as = (path: string, body: Record<string, unknown> = {}) => t.call<Record<string, unknown>>(path, body, { token: t.admin.token });

  it('get/roles lists the four roles with their weekly allowance; set/uploadlimit changes one', async () => {
    t = await createTestApp(dialect);
    expect((await as('/api/v1/admin/set/uploadlimit', { roleName: 'trusted', invitesAllowed: 7 })).status).toBe(200);
    const res = await as('/api/v1/admin/get/roles');
    expect(res.status).toBe(200);
    const roles = res.body.roles as { _id: string; name: string; invites_allowed: number }[];
    expect(roles.map((r) => r.name)).toEqual(['default', 'trusted', 'mod', 'admin']);
    expect(roles.find((r) => r.name === 'trusted')!.invites_allowed).toBe(7);
    expect(typeof roles[0]!._id).toBe('string');
    const negative = await as('/api/v1/admin/set/uploadlimit', { roleName: 'trusted', invitesAllowed: -1 });
    expect(negative.status).toBe(400);
    expect(negative.body.error).toMatch(/invitesAllowed/);
  });

  it('update/settings switches uploading and maintenance; set/maxfilesize sets the limit in MB', async () => {
    t = await createTestApp(dialect);
    expect((await as('/api/v1/admin/update/settings', { setting: 'allow_uploading', value: false })).body).toMatchObject({ success: true });
    expect((await as('/api/v1/admin/set/maxfilesize', { value: 50 })).status).toBe(200);
    expect(await t.deps.settings.get()).toEqual({ allow_uploading: false, maintenance_mode: false, max_file_size: 50 });
    expect((await as('/api/v1/admin/update/settings', { setting: 'max_file_size', value: true })).status).toBe(400);
    expect((await as('/api/v1/admin/set/maxfilesize', { value: 0 })).status).toBe(400);
    expect((await as('/api/v1/admin/set/maxfilesize', { value: 1.5 })).status).toBe(400);
  });

  it('adds MIME types (lower-cased, deduplicated), refuses a bad entry by name, and deletes one', async () => {
    t = await createTestApp(dialect);
    const before = (await as('/api/v1/admin/get/mimetypes')).body.mimetypes as string[];
    expect(before).toContain('image/*');
    const add = await as('/api/v1/admin/update/mimetypes', { mimeTypes: ' Font/WOFF2, text/csv,font/woff2 ,,' });
    expect(add.status).toBe(200);
    expect(add.body.mimetypes).toEqual([...before, 'font/woff2', 'text/csv'].sort());
    expect((await as('/api/v1/admin/get/mimetypes')).body.mimetypes).toEqual(add.body.mimetypes);

    const snap = await snapshot(t);
    const bad = await as('/api/v1/admin/update/mimetypes', { mimeTypes: 'text/markdown, not a type' });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toBe("'not a type' is not a valid MIME type (use type/subtype or type/*).");
    expect((await as('/api/v1/admin/update/mimetypes', { mimeTypes: ' , ' })).status).toBe(400);
    expect(await snapshot(t)).toBe(snap);

    const del = await as('/api/v1/admin/delete/mimetypes', { mimeType: 'TEXT/CSV' });
    expect(del.status).toBe(200);
    expect(del.body.mimetypes).not.toContain('text/csv');
    const again = await as('/api/v1/admin/delete/mimetypes', { mimeType: 'text/csv' });
    expect(again.status).toBe(404);
    expect(again.body.error).toBe("'text/csv' is not in the allowed list.");
  });

  it('get/users searches, filters, sorts and pages', async () => {
    t = await createTestApp(dialect);
    const now = nowSeconds();
    const mk = async (username: string, role: string, banned: number, age: number) =>
      t.deps.db.insertInto('users').values({ id: newId(), username, username_lower: username.toLowerCase(), password_hash: 'x', role, banned, time_created: now - age }).execute();
    await mk('Alice', 'default', 0, 100);
    await mk('alfred', 'trusted', 1, 200);
    await mk('Bob', 'mod', 0, 300);
    for (let i = 0; i < 9; i++) await mk(`filler${i}`, 'default', 0, 1000 + i);

    const first = await as('/api/v1/admin/get/users');
    expect(first.body).toMatchObject({ success: true, totalPages: 2, totalUsers: 13 });
    const users = first.body.users as UserOut[];
    expect(users).toHaveLength(8);
    expect(users[0]).toMatchObject({ username: 'admin', role: 'admin', banned: false });
    expect(typeof users[0]!.time_created).toBe('number');

    const q = await as('/api/v1/admin/get/users', { query: 'AL', sortBy: 'time_created_asc' });
    expect((q.body.users as UserOut[]).map((u) => u.username)).toEqual(['alfred', 'Alice']);
    expect(q.body.totalUsers).toBe(2);
    const banned = await as('/api/v1/admin/get/users', { showBannedOnly: true });
    expect((banned.body.users as UserOut[]).map((u) => [u.username, u.banned])).toEqual([['alfred', true]]);
    const mods = await as('/api/v1/admin/get/users', { roleFilter: 'mod' });
    expect((mods.body.users as UserOut[]).map((u) => u.username)).toEqual(['Bob']);
    const byRole = await as('/api/v1/admin/get/users', { sortBy: 'role', limit: 4 });
    expect((byRole.body.users as UserOut[]).map((u) => u.role)).toEqual(['admin', 'mod', 'trusted', 'default']);
    expect(byRole.body.totalPages).toBe(4);
    // Users made in one second (time_created counts seconds) list in the order they were made.
    for (const name of ['same0', 'same1', 'same2']) await mk(name, 'default', 0, 50);
    const same = async (sortBy: string) =>
      ((await as('/api/v1/admin/get/users', { query: 'same', sortBy })).body.users as UserOut[]).map((u) => u.username);
    expect(await same('time_created_desc')).toEqual(['same2', 'same1', 'same0']);
    expect(await same('time_created_asc')).toEqual(['same0', 'same1', 'same2']);
    const literal = await as('/api/v1/admin/get/users', { query: '%' });
    expect(literal.body.users).toEqual([]);
    expect((await as('/api/v1/admin/get/users', { limit: 101 })).status).toBe(400);
  });

  it('update/role sets default, trusted or mod, never admin, and never on self or an admin', async () => {
    t = await createTestApp(dialect);
    const u = await t.createUser();
    expect((await as('/api/v1/admin/update/role', { userId: u.id, newRole: 'mod' })).status).toBe(200);
    expect((await t.call('/api/v1/auth/data', {}, { token: u.token })).body).toMatchObject({ user: { role: 'mod' } });
    const toAdmin = await as('/api/v1/admin/update/role', { userId: u.id, newRole: 'admin' });
    expect(toAdmin.status).toBe(400);
    const self = await as('/api/v1/admin/update/role', { userId: t.admin.id, newRole: 'default' });
    expect(self.status).toBe(403);
    expect(self.body.error).toBe('You cannot change the role of yourself.');
    const otherAdmin = await t.createUser({ role: 'admin' });
    const demote = await as('/api/v1/admin/update/role', { userId: otherAdmin.id, newRole: 'default' });
    expect(demote.status).toBe(403);
    expect(demote.body.error).toBe('You cannot change the role of an administrator.');
    expect((await as('/api/v1/admin/update/role', { userId: 'missing', newRole: 'mod' })).status).toBe(404);
  });

  it('update/username renames a user and refuses a taken name', async () => {
    t = await createTestApp(dialect);
    const u = await t.createUser();
    const other = await t.createUser({ username: 'Taken.Name' });
    expect((await as('/api/v1/admin/update/username', { targetUserId: u.id, newUsername: 'renamed' })).status).toBe(200);
    expect((await t.call('/api/v1/auth/data', {}, { token: u.token })).body).toMatchObject({ user: { username: 'renamed' } });
    const taken = await as('/api/v1/admin/update/username', { targetUserId: u.id, newUsername: 'taken.name' });
    expect(taken.status).toBe(409);
    expect((await as('/api/v1/admin/update/username', { targetUserId: 'missing', newUsername: 'whoever' })).status).toBe(404);
    expect(other.username).toBe('Taken.Name');
  });

  it('update/username answers 404 for an account being removed, as every admin action does, and leaves its name', async () => {
    t = await createTestApp(dialect);
    const u = await t.createUser({ username: 'leaving_user' });
    expect(await markForRemoval(t.deps.db, u.id)).toBe(true);
    const res = await as('/api/v1/admin/update/username', { targetUserId: u.id, newUsername: 'renamed_ghost' });
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ success: false, error: 'User not found.' });
    expect(await t.deps.db.selectFrom('users').select('username').where('id', '=', u.id).executeTakeFirst()).toEqual({ username: 'leaving_user' });
  });

  it('update/userpass sets a new password and ends that user’s sessions', async () => {
    t = await createTestApp(dialect);
    const u = await t.createUser();
    expect((await as('/api/v1/admin/update/userpass', { userId: u.id, newPassword: 'reset-by-admin' })).status).toBe(200);
    expect((await t.call('/api/v1/auth/data', {}, { token: u.token })).status).toBe(401);
    expect((await t.call('/api/v1/auth/login', { username: u.username, password: 'reset-by-admin' })).status).toBe(200);
    const otherAdmin = await t.createUser({ role: 'admin' });
    expect((await as('/api/v1/admin/update/userpass', { userId: otherAdmin.id, newPassword: 'hijacked-pass' })).status).toBe(403);
    expect((await as('/api/v1/admin/update/userpass', { userId: 'missing', newPassword: 'whatever-pass' })).status).toBe(404);
    expect((await as('/api/v1/admin/update/userpass', { userId: u.id, newPassword: 'short' })).status).toBe(400);
  });

  it('set/ban toggles, and refuses self, another admin and unknown users', async () => {
    t = await createTestApp(dialect);
    const u = await t.createUser();
    expect((await as('/api/v1/admin/set/ban', { userId: u.id })).body).toEqual({ success: true, banned: true, message: 'User banned.' });
    expect((await t.call('/api/v1/auth/login', { username: u.username, password: u.password })).status).toBe(403);
    expect((await as('/api/v1/admin/set/ban', { userId: u.id })).body).toEqual({ success: true, banned: false, message: 'User unbanned.' });
    expect((await t.call('/api/v1/auth/login', { username: u.username, password: u.password })).status).toBe(200);
    const self = await as('/api/v1/admin/set/ban', { userId: t.admin.id });
    expect(self.status).toBe(403);
    expect(self.body.error).toBe('You cannot ban yourself.');
    const otherAdmin = await t.createUser({ role: 'admin' });
    expect((await as('/api/v1/admin/set/ban', { userId: otherAdmin.id })).status).toBe(403);
    expect((await as('/api/v1/admin/set/ban', { userId: 'missing' })).status).toBe(404);
  });

  it('set/remove deletes the user, their rows and their stored bytes, but not self or an admin', async () => {
    t = await createTestApp(dialect);
    const u = await t.createUser();
    await t.call('/api/v1/auth/apikeys/generate', {}, { token: u.token });
    // A listed file and an unfinished upload, with bytes in storage.
    await t.deps.storage.writeAt('obj-file', 0, Readable.from([Buffer.from('hello')]));
    await t.deps.storage.finalize('obj-file', 5);
    await t.deps.storage.writeAt('obj-upload', 0, Readable.from([Buffer.from('part')]));
    const now = nowSeconds();
    await t.deps.db
      .insertInto('files')
      .values({ id: newId(), actual_name: 'abc.txt', original_name: 'a.txt', user_id: u.id, size: 5, mime_type: 'text/plain', width: null, height: null, time_created: now, storage_key: 'obj-file', sha256: null })
      .execute();
    await t.deps.db
      .insertInto('uploads')
      .values({ id: newId(), user_id: u.id, original_name: 'b.bin', total_chunks: 2, file_size: null, storage_key: 'obj-upload', created_at: now, updated_at: now, expires_at: now + 86_400 })
      .execute();
    expect(await t.deps.storage.stat('obj-file')).toEqual({ size: 5 });

    const res = await as('/api/v1/admin/set/remove', { userId: u.id });
    expect(res.status).toBe(200);
    expect(await t.deps.db.selectFrom('users').select('id').where('id', '=', u.id).execute()).toEqual([]);
    expect(await t.deps.db.selectFrom('files').select('id').where('user_id', '=', u.id).execute()).toEqual([]);
    expect(await t.deps.db.selectFrom('api_keys').select('id').where('user_id', '=', u.id).execute()).toEqual([]);
    expect(await t.deps.storage.stat('obj-file')).toBeNull();
    expect((await t.call('/api/v1/auth/data', {}, { token: u.token })).status).toBe(401);

    expect((await as('/api/v1/admin/set/remove', { userId: u.id })).status).toBe(404);
    expect((await as('/api/v1/admin/set/remove', { userId: t.admin.id })).body).toEqual({ success: false, error: 'You cannot delete yourself.' });
    const otherAdmin = await t.createUser({ role: 'admin' });
    expect((await as('/api/v1/admin/set/remove', { userId: otherAdmin.id })).status).toBe(403);
  });

  it('creates invites, lists them in the invite logs with filters, and removes any invite', async () => {
    t = await createTestApp(dialect);
    const created = await as('/api/v1/admin/create/invites', { count: 3 });
    expect(created.status).toBe(200);
    const keys = created.body.inviteKeys as string[];
    expect(keys).toHaveLength(3);
    expect(new Set(keys).size).toBe(3);
    expect((await as('/api/v1/admin/create/invites', { count: 0 })).status).toBe(400);
    expect((await as('/api/v1/admin/create/invites', { count: 101 })).status).toBe(400);

    const u = await t.createUser({ username: 'inviter' });
    await t.call('/api/v1/admin/set/uploadlimit', { roleName: 'default', invitesAllowed: 1 }, { token: t.admin.token });
    const userKey = (await t.call<{ inviteKey: string }>('/api/v1/utils/invites', {}, { token: u.token })).body.inviteKey;
    await t.call('/api/v1/auth/register', { username: 'joiner', password: 'password-1', invitekey: userKey });

    type Inv = { _id: string; inviteKey: string; createdBy: string; claimed: boolean; claimedBy: string | null };
    const all = await as('/api/v1/admin/get/invitelogs');
    expect(all.body).toMatchObject({ success: true, total: 5, totalPages: 1 });
    const byCreator = await as('/api/v1/admin/get/invitelogs', { filters: { createdBy: 'INVIT' } });
    expect(byCreator.body.invites).toEqual([expect.objectContaining({ inviteKey: userKey, createdBy: 'inviter', claimed: true, claimedBy: 'joiner' })]);
    const byClaimer = await as('/api/v1/admin/get/invitelogs', { filters: { claimedBy: 'join', claimedFilter: 'claimed' } });
    expect((byClaimer.body.invites as Inv[]).map((i) => i.inviteKey)).toEqual([userKey]);
    const byKey = await as('/api/v1/admin/get/invitelogs', { filters: { inviteKey: keys[1]!.slice(2, 12) } });
    expect((byKey.body.invites as Inv[]).map((i) => i.inviteKey)).toEqual([keys[1]]);
    // The batch was made in one second (createdAt counts seconds): newest first is the last made first.
    const batch = (all.body.invites as Inv[]).map((i) => i.inviteKey).filter((k) => keys.includes(k));
    expect(batch).toEqual([...keys].reverse());
    const unclaimed = await as('/api/v1/admin/get/invitelogs', { filters: { claimedFilter: 'unclaimed' }, limit: 2, page: 2 });
    expect(unclaimed.body).toMatchObject({ total: 4, totalPages: 2 });
    expect(unclaimed.body.invites).toHaveLength(2);

    const target = (byCreator.body.invites as Inv[])[0]!;
    expect((await as('/api/v1/admin/set/inviteremove', { inviteKeyId: target._id })).status).toBe(200);
    expect((await as('/api/v1/admin/set/inviteremove', { inviteKeyId: target._id })).status).toBe(404);
    expect((await as('/api/v1/admin/get/invitelogs')).body.total).toBe(4);
  });
});
