import { afterEach, describe, expect, it } from 'vitest';
import { Type } from 'typebox';
import { Body, Token, endpoint } from '../../../contract/common.ts';
import { post } from '../../../server/http/route.ts';
import { DIALECTS, createTestApp, type TestApp } from '../../helpers/test-app.ts';
import { snapshot } from './fixtures.ts';

describe.each(DIALECTS)('authentication on %s', (dialect) => {
  let t: TestApp;
  afterEach(async () => t?.close());

  it('auth/data answers the signed-in user and the maintenance flag', async () => {
    t = await createTestApp(dialect);
    const u = await t.createUser({ role: 'trusted' });
    const res = await t.call('/api/v1/auth/data', {}, { token: u.token });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ success: true, user: { _id: u.id, username: u.username, role: 'trusted' }, maintenance: false });
    expect((await t.call('/api/v1/auth/data', {}, { token: 'nope' })).status).toBe(401);
    expect((await t.call('/api/v1/auth/data', {})).status).toBe(401);
    // Design §5 also accepts the token as a bearer header.
    const viaHeader = await t.call('/api/v1/auth/data', {}, { headers: { authorization: `Bearer ${u.token}` } });
    expect(viaHeader.status).toBe(200);
  });

  it('logs in with the right password and refuses a wrong one with error.error', async () => {
    t = await createTestApp(dialect);
    const u = await t.createUser();
    const ok = await t.call<{ success: boolean; token: string }>('/api/v1/auth/login', { username: u.username.toUpperCase(), password: u.password });
    expect(ok.status).toBe(200);
    expect(ok.body.success).toBe(true);
    const data = await t.call('/api/v1/auth/data', {}, { token: ok.body.token });
    expect(data.body).toMatchObject({ success: true, user: { username: u.username } });

    const wrong = await t.call('/api/v1/auth/login', { username: u.username, password: 'not-the-password' });
    expect(wrong.status).toBe(401);
    expect(wrong.body).toEqual({ success: false, error: { error: 'Invalid username or password.' } });
    const unknown = await t.call('/api/v1/auth/login', { username: 'nobody-here', password: 'whatever1' });
    expect(unknown.status).toBe(401);
    expect(unknown.body).toEqual(wrong.body);
  });

  it('refuses a banned user at login with 403, but only once the password is right', async () => {
    t = await createTestApp(dialect);
    const u = await t.createUser({ banned: true });
    const res = await t.call('/api/v1/auth/login', { username: u.username, password: u.password });
    expect(res.status).toBe(403);
    expect(res.body).toEqual({ success: false, error: { error: 'Your account has been banned.' } });
    expect((await t.call('/api/v1/auth/login', { username: u.username, password: 'wrong-password' })).status).toBe(401);
  });

  it('during maintenance lets everyone log in and see auth/data, but answers other calls 503 to non-admins', async () => {
    t = await createTestApp(dialect);
    const u = await t.createUser();
    await t.call('/api/v1/admin/update/settings', { setting: 'maintenance_mode', value: true }, { token: t.admin.token });
    const login = await t.call<{ token: string }>('/api/v1/auth/login', { username: u.username, password: u.password });
    expect(login.status).toBe(200);
    const data = await t.call('/api/v1/auth/data', {}, { token: login.body.token });
    expect(data.body).toMatchObject({ success: true, maintenance: true });
    const other = await t.call('/api/v1/auth/apikeys', {}, { token: login.body.token });
    expect(other.status).toBe(503);
    expect(other.body).toEqual({ success: false, error: 'The site is under maintenance.' });
    expect((await t.call('/api/v1/auth/register', { username: 'newbie', password: 'password-1', invitekey: t.inviteKey })).status).toBe(503);
    expect((await t.call('/api/v1/auth/apikeys', {}, { token: t.admin.token })).status).toBe(200);
  });

  it('registers with an invite, once: the key is then used up', async () => {
    t = await createTestApp(dialect);
    const res = await t.call('/api/v1/auth/register', { username: 'Newcomer', password: 'password-1', invitekey: t.inviteKey });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ success: true, message: 'Account has been created!' });
    const login = await t.call('/api/v1/auth/login', { username: 'newcomer', password: 'password-1' });
    expect(login.status).toBe(200);
    const user = await t.deps.db.selectFrom('users').selectAll().where('username', '=', 'Newcomer').executeTakeFirstOrThrow();
    expect(user.role).toBe('default');
    const invite = await t.deps.db.selectFrom('invites').selectAll().where('invite_key', '=', t.inviteKey).executeTakeFirstOrThrow();
    expect(invite).toMatchObject({ claimed: 1, claimed_by: user.id });

    const again = await t.call('/api/v1/auth/register', { username: 'second', password: 'password-1', invitekey: t.inviteKey });
    expect(again.status).toBe(400);
    expect(again.body).toEqual({ success: false, error: 'Invalid or already used invite key.' });
  });

  it('refuses an unknown or deleted invite with 400 and a taken name (any case) with 409, creating nobody', async () => {
    t = await createTestApp(dialect);
    const before = await snapshot(t);
    const unknown = await t.call('/api/v1/auth/register', { username: 'someone', password: 'password-1', invitekey: 'made-up' });
    expect(unknown.status).toBe(400);
    const taken = await t.call('/api/v1/auth/register', { username: 'ADMIN', password: 'password-1', invitekey: t.inviteKey });
    expect(taken.status).toBe(409);
    expect(taken.body).toEqual({ success: false, error: 'That username is already taken.' });
    expect(await snapshot(t)).toBe(before);

    const invite = await t.deps.db.selectFrom('invites').select('id').where('invite_key', '=', t.inviteKey).executeTakeFirstOrThrow();
    expect((await t.call('/api/v1/admin/set/inviteremove', { inviteKeyId: invite.id }, { token: t.admin.token })).status).toBe(200);
    const deleted = await t.call('/api/v1/auth/register', { username: 'someone', password: 'password-1', invitekey: t.inviteKey });
    expect(deleted.status).toBe(400);
    expect(await t.deps.db.selectFrom('users').select('id').where('username_lower', '=', 'someone').execute()).toEqual([]);
  });

  it('of 20 concurrent registrations with one invite key, exactly one creates an account', async () => {
    t = await createTestApp(dialect);
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) => t.call('/api/v1/auth/register', { username: `racer${i}`, password: 'password-1', invitekey: t.inviteKey })),
    );
    const statuses = results.map((r) => r.status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(1);
    expect(statuses.filter((s) => s === 400)).toHaveLength(19);
    const racers = await t.deps.db.selectFrom('users').select('username').where('username', 'like', 'racer%').execute();
    expect(racers).toHaveLength(1);
    const invite = await t.deps.db.selectFrom('invites').selectAll().where('invite_key', '=', t.inviteKey).executeTakeFirstOrThrow();
    const winner = await t.deps.db.selectFrom('users').select('id').where('username', '=', racers[0]!.username).executeTakeFirstOrThrow();
    expect(invite.claimed_by).toBe(winner.id);
  });

  it('of two concurrent registrations for one name, one wins and the loser’s invite stays unclaimed', async () => {
    t = await createTestApp(dialect);
    const keys = (await t.call<{ inviteKeys: string[] }>('/api/v1/admin/create/invites', { count: 2 }, { token: t.admin.token })).body.inviteKeys;
    const results = await Promise.all(keys.map((invitekey, i) => t.call('/api/v1/auth/register', { username: i === 0 ? 'SameName' : 'samename', password: 'password-1', invitekey })));
    expect(results.map((r) => r.status).sort()).toEqual([200, 409]);
    expect(results.find((r) => r.status === 409)!.body).toEqual({ success: false, error: 'That username is already taken.' });
    const invites = await t.deps.db.selectFrom('invites').select(['claimed']).where('invite_key', 'in', keys).execute();
    expect(invites.map((i) => i.claimed).sort()).toEqual([0, 1]);
    expect(await t.deps.db.selectFrom('users').select('id').where('username_lower', '=', 'samename').execute()).toHaveLength(1);
  });

  it('logout revokes only the caller’s session', async () => {
    t = await createTestApp(dialect);
    const u = await t.createUser();
    const other = await t.call<{ token: string }>('/api/v1/auth/login', { username: u.username, password: u.password });
    const res = await t.call('/api/v1/auth/logout', {}, { token: u.token });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ success: true });
    expect((await t.call('/api/v1/auth/data', {}, { token: u.token })).status).toBe(401);
    expect((await t.call('/api/v1/auth/data', {}, { token: other.body.token })).status).toBe(200);
  });

  it('generates, lists and revokes the caller’s own API keys, up to 10', async () => {
    t = await createTestApp(dialect);
    const u = await t.createUser();
    const stranger = await t.createUser();
    expect((await t.call('/api/v1/auth/apikeys', {}, { token: u.token })).body).toEqual({ success: true, apiKeys: [] });
    const gen = await t.call<{ success: boolean; apiKey: { _id: string; key: string; createdAt: number } }>('/api/v1/auth/apikeys/generate', {}, { token: u.token });
    expect(gen.status).toBe(200);
    expect(gen.body.apiKey.key).toMatch(/^stash_[A-Za-z0-9_-]{32}$/);
    // When it was made, so the owner can tell keys apart (an addition to spec §7's shape).
    expect(Math.abs(gen.body.apiKey.createdAt - Date.now() / 1000)).toBeLessThan(60);
    const list = await t.call('/api/v1/auth/apikeys', {}, { token: u.token });
    expect(list.body).toEqual({ success: true, apiKeys: [gen.body.apiKey] });

    // Someone else's key, by key or by id, is not found and stays.
    const theirs = await t.call<{ apiKey: { _id: string; key: string } }>('/api/v1/auth/apikeys/generate', {}, { token: stranger.token });
    for (const apiKey of [theirs.body.apiKey.key, theirs.body.apiKey._id, 'nothing-like-it']) {
      const res = await t.call('/api/v1/auth/apikeys/revoke', { apiKey }, { token: u.token });
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ success: false, error: 'API key not found.' });
    }
    expect((await t.call<{ apiKeys: unknown[] }>('/api/v1/auth/apikeys', {}, { token: stranger.token })).body.apiKeys).toHaveLength(1);

    expect((await t.call('/api/v1/auth/apikeys/revoke', { apiKey: gen.body.apiKey.key }, { token: u.token })).status).toBe(200);
    expect((await t.call('/api/v1/auth/apikeys', {}, { token: u.token })).body).toEqual({ success: true, apiKeys: [] });
    const second = await t.call<{ apiKey: { _id: string } }>('/api/v1/auth/apikeys/generate', {}, { token: u.token });
    expect((await t.call('/api/v1/auth/apikeys/revoke', { apiKey: second.body.apiKey._id }, { token: u.token })).status).toBe(200);

    for (let i = 0; i < 10; i++) expect((await t.call('/api/v1/auth/apikeys/generate', {}, { token: u.token })).status).toBe(200);
    const over = await t.call('/api/v1/auth/apikeys/generate', {}, { token: u.token });
    expect(over.status).toBe(409);
    expect(over.body).toEqual({ success: false, error: 'You can have at most 10 API keys. Revoke one first.' });
  });

  it('an API key opens only API-key routes, and none of the account routes', async () => {
    t = await createTestApp(dialect);
    const u = await t.createUser();
    const gen = await t.call<{ apiKey: { key: string } }>('/api/v1/auth/apikeys/generate', {}, { token: u.token });
    const res = await t.call('/api/v1/auth/apikeys', {}, { token: gen.body.apiKey.key });
    expect(res.status).toBe(403);
    expect(res.body).toEqual({ success: false, error: 'API keys cannot be used for this call.' });
  });

  it('a ban stops the user’s existing token and API keys at once', async () => {
    t = await createTestApp(dialect);
    // A route that accepts API keys, registered through the same route helper the file calls use.
    const probe = endpoint('/api/v1/test/whoami', Body({ token: Token }), Type.Object({ success: Type.Literal(true), username: Type.String() }));
    post(t.api, t.deps, probe, { access: 'user', apiKey: true }, async ({ caller }) => ({ success: true as const, username: caller.username }));
    const u = await t.createUser();
    const key = (await t.call<{ apiKey: { key: string } }>('/api/v1/auth/apikeys/generate', {}, { token: u.token })).body.apiKey.key;
    expect((await t.call('/api/v1/test/whoami', {}, { token: key })).body).toEqual({ success: true, username: u.username });
    expect((await t.call('/api/v1/auth/data', {}, { token: u.token })).status).toBe(200);

    const ban = await t.call('/api/v1/admin/set/ban', { userId: u.id }, { token: t.admin.token });
    expect(ban.body).toMatchObject({ success: true, banned: true });

    expect((await t.call('/api/v1/auth/data', {}, { token: u.token })).status).toBe(401);
    const byKey = await t.call('/api/v1/test/whoami', {}, { token: key });
    expect(byKey.status).toBe(403);
    expect(byKey.body).toEqual({ success: false, error: 'Your account has been banned.' });
    const byHeader = await t.call('/api/v1/test/whoami', {}, { headers: { authorization: `Bearer ${key}` } });
    expect(byHeader.status).toBe(403);

    // Unbanning gives the keys back; the ended sessions stay ended.
    await t.call('/api/v1/admin/set/ban', { userId: u.id }, { token: t.admin.token });
    expect((await t.call('/api/v1/test/whoami', {}, { token: key })).status).toBe(200);
    expect((await t.call('/api/v1/auth/data', {}, { token: u.token })).status).toBe(401);
  });
});
