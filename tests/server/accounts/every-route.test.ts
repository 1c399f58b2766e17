import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIALECTS, createTestApp, type TestApp } from '../../helpers/test-app.ts';
import { snapshot } from './fixtures.ts';

type Access = 'public' | 'user' | 'admin';
interface Route {
  path: string;
  access: Access;
  /** A body with every field the contract knows, each of the right type. */
  valid: Record<string, unknown>;
}

const ID = 'aaaaaaaaaaaaaaaaaaaaaaaa';

/** Every call this area serves (spec §7 but the file calls, plus auth/logout). */
const ROUTES: Route[] = [
  { path: '/api/v1/auth/login', access: 'public', valid: { username: 'someone', password: 'password-1', captcha: 'x', captchaType: 'hcaptcha' } },
  { path: '/api/v1/auth/register', access: 'public', valid: { username: 'someone', password: 'password-1', invitekey: 'key', captcha: 'x', captchaType: 'turnstile' } },
  { path: '/api/v1/auth/data', access: 'user', valid: {} },
  { path: '/api/v1/auth/logout', access: 'user', valid: {} },
  { path: '/api/v1/auth/apikeys', access: 'user', valid: {} },
  { path: '/api/v1/auth/apikeys/generate', access: 'user', valid: {} },
  { path: '/api/v1/auth/apikeys/revoke', access: 'user', valid: { apiKey: 'stash_x' } },
  { path: '/api/v1/utils/settings', access: 'user', valid: {} },
  { path: '/api/v1/utils/changeuser', access: 'user', valid: { newUsername: 'renamed' } },
  { path: '/api/v1/utils/changepassword', access: 'user', valid: { currentPassword: 'password-1', newPassword: 'password-2' } },
  { path: '/api/v1/utils/invites/invite-limit', access: 'user', valid: {} },
  { path: '/api/v1/utils/invites', access: 'user', valid: {} },
  { path: '/api/v1/manage/invites', access: 'user', valid: { page: 1, limit: 8, filters: { claimedFilter: 'all', claimedBy: '' } } },
  { path: '/api/v1/manage/inviteremoval', access: 'user', valid: { inviteKeyId: ID } },
  { path: '/api/v1/admin/get/roles', access: 'admin', valid: {} },
  { path: '/api/v1/admin/get/mimetypes', access: 'admin', valid: {} },
  { path: '/api/v1/admin/update/settings', access: 'admin', valid: { setting: 'allow_uploading', value: false } },
  { path: '/api/v1/admin/update/mimetypes', access: 'admin', valid: { mimeTypes: 'text/csv' } },
  { path: '/api/v1/admin/delete/mimetypes', access: 'admin', valid: { mimeType: 'image/*' } },
  { path: '/api/v1/admin/set/uploadlimit', access: 'admin', valid: { roleName: 'default', invitesAllowed: 9 } },
  { path: '/api/v1/admin/set/maxfilesize', access: 'admin', valid: { value: 10 } },
  {
    path: '/api/v1/admin/get/users',
    access: 'admin',
    valid: { page: 1, limit: 8, query: '', sortBy: 'role', roleFilter: '', showBannedOnly: false },
  },
  { path: '/api/v1/admin/update/role', access: 'admin', valid: { userId: ID, newRole: 'mod' } },
  { path: '/api/v1/admin/update/username', access: 'admin', valid: { targetUserId: ID, newUsername: 'renamed' } },
  { path: '/api/v1/admin/update/userpass', access: 'admin', valid: { userId: ID, newPassword: 'password-2' } },
  { path: '/api/v1/admin/set/ban', access: 'admin', valid: { userId: ID } },
  { path: '/api/v1/admin/set/remove', access: 'admin', valid: { userId: ID } },
  {
    path: '/api/v1/admin/get/invitelogs',
    access: 'admin',
    valid: { page: 1, limit: 8, filters: { inviteKey: '', createdBy: '', claimedBy: '', claimedFilter: 'claimed' } },
  },
  { path: '/api/v1/admin/create/invites', access: 'admin', valid: { count: 2 } },
  { path: '/api/v1/admin/set/inviteremove', access: 'admin', valid: { inviteKeyId: ID } },
];

/** A value of another JSON type than `v`: ajv runs without coercion, so each must be refused. */
function wrongType(v: unknown): unknown {
  if (typeof v === 'string') return 12345;
  if (typeof v === 'number') return String(v);
  if (typeof v === 'boolean') return 'true';
  return 'not an object';
}

interface Case {
  name: string;
  payload: string;
}

/** Malformed variants of a route's body: the kinds design §5 names, field by field. */
function malformedCases(route: Route): Case[] {
  const json = (v: unknown) => JSON.stringify(v);
  const cases: Case[] = [
    { name: 'invalid JSON', payload: '{"page": 1,' },
    { name: 'empty body', payload: '' },
    { name: 'an array instead of an object', payload: '[]' },
    { name: 'a number instead of an object', payload: '42' },
    { name: 'an unknown field', payload: json({ ...route.valid, isAdmin: true }) },
  ];
  const big = 'x'.repeat(100 * 1024);
  for (const [key, value] of Object.entries(route.valid)) {
    cases.push({ name: `'${key}' of the wrong type`, payload: json({ ...route.valid, [key]: wrongType(value) }) });
    if (typeof value === 'string') cases.push({ name: `'${key}' as a 100 kB string`, payload: json({ ...route.valid, [key]: big }) });
    if (value && typeof value === 'object') {
      cases.push({ name: `'${key}' with an unknown field`, payload: json({ ...route.valid, [key]: { ...value, extra: 1 } }) });
      for (const [inner, innerValue] of Object.entries(value)) {
        cases.push({ name: `'${key}.${inner}' of the wrong type`, payload: json({ ...route.valid, [key]: { ...value, [inner]: wrongType(innerValue) } }) });
        if (typeof innerValue === 'string') {
          cases.push({ name: `'${key}.${inner}' as a 100 kB string`, payload: json({ ...route.valid, [key]: { ...value, [inner]: big } }) });
        }
      }
    }
  }
  return cases;
}

/** Required fields: those a caller cannot leave out. Leaving each out must be a 400. */
const REQUIRED: Record<string, string[]> = {
  '/api/v1/auth/login': ['username', 'password'],
  '/api/v1/auth/register': ['username', 'password', 'invitekey'],
  '/api/v1/auth/apikeys/revoke': ['apiKey'],
  '/api/v1/utils/changeuser': ['newUsername'],
  '/api/v1/utils/changepassword': ['currentPassword', 'newPassword'],
  '/api/v1/manage/inviteremoval': ['inviteKeyId'],
  '/api/v1/admin/update/settings': ['setting', 'value'],
  '/api/v1/admin/update/mimetypes': ['mimeTypes'],
  '/api/v1/admin/delete/mimetypes': ['mimeType'],
  '/api/v1/admin/set/uploadlimit': ['roleName', 'invitesAllowed'],
  '/api/v1/admin/set/maxfilesize': ['value'],
  '/api/v1/admin/update/role': ['userId', 'newRole'],
  '/api/v1/admin/update/username': ['targetUserId', 'newUsername'],
  '/api/v1/admin/update/userpass': ['userId', 'newPassword'],
  '/api/v1/admin/set/ban': ['userId'],
  '/api/v1/admin/set/remove': ['userId'],
  '/api/v1/admin/create/invites': ['count'],
  '/api/v1/admin/set/inviteremove': ['inviteKeyId'],
};

describe.each(DIALECTS)('every account route on %s', (dialect) => {
  let t: TestApp;
  let tokens: Record<'default' | 'trusted' | 'mod', string>;
  let apiKey: string;
  let bannedToken: string;

  beforeAll(async () => {
    t = await createTestApp(dialect);
    tokens = {
      default: (await t.createUser({ role: 'default' })).token,
      trusted: (await t.createUser({ role: 'trusted' })).token,
      mod: (await t.createUser({ role: 'mod' })).token,
    };
    const keyOwner = await t.createUser({ role: 'default' });
    apiKey = (await t.call<{ apiKey: { key: string } }>('/api/v1/auth/apikeys/generate', {}, { token: keyOwner.token })).body.apiKey.key;
    bannedToken = (await t.createUser({ banned: true })).token;
  });
  afterAll(async () => t?.close());

  it('lists routes the server really serves', () => {
    for (const r of ROUTES) expect(t.api.hasRoute({ method: 'POST', url: r.path }), r.path).toBe(true);
  });

  it.each(ROUTES.filter((r) => r.access === 'admin'))('$path answers 403 to default, trusted and mod, and changes nothing', async (route) => {
    const before = await snapshot(t);
    for (const role of ['default', 'trusted', 'mod'] as const) {
      const res = await t.call(route.path, route.valid, { token: tokens[role] });
      expect(res.status, `${role} on ${route.path}`).toBe(403);
      expect(res.body).toEqual({ success: false, error: 'You are not authorized to access this resource.' });
    }
    expect(await snapshot(t)).toBe(before);
  });

  it.each(ROUTES.filter((r) => r.access !== 'public'))('$path answers 401 without or with a bad token, 403 to an API key or a banned user', async (route) => {
    const before = await snapshot(t);
    const none = await t.call(route.path, route.valid);
    expect(none.status).toBe(401);
    expect(none.body).toEqual({ success: false, error: 'You must be signed in.' });
    const bad = await t.call(route.path, route.valid, { token: 'not-a-real-token' });
    expect(bad.status).toBe(401);
    expect(bad.body).toEqual({ success: false, error: 'Your session has expired. Please sign in again.' });
    const byKey = await t.call(route.path, route.valid, { token: apiKey });
    expect(byKey.status).toBe(403);
    const banned = await t.call(route.path, route.valid, { token: bannedToken });
    expect(banned.status).toBe(403);
    expect(banned.body).toEqual({ success: false, error: 'Your account has been banned.' });
    expect(await snapshot(t)).toBe(before);
  });

  it.each(ROUTES)('$path answers every malformed body with a readable 400 and changes nothing', async (route) => {
    const before = await snapshot(t);
    const cases = malformedCases(route);
    for (const field of REQUIRED[route.path] ?? []) {
      const rest = { ...route.valid };
      delete rest[field];
      cases.push({ name: `'${field}' missing`, payload: JSON.stringify(rest) });
    }
    for (const c of cases) {
      // The credential rides in the header, so even a body that is not an object is checked as a body.
      const res = await t.call<{ success: boolean; error: unknown }>(route.path, c.payload, { headers: { authorization: `Bearer ${t.admin.token}` } });
      expect(res.status, `${route.path}: ${c.name} → ${JSON.stringify(res.body)}`).toBe(400);
      expect(res.body.success).toBe(false);
      expect(typeof res.body.error, c.name).toBe('string');
      expect((res.body.error as string).length).toBeGreaterThan(5);
      expect((res.body.error as string).length).toBeLessThan(200);
    }
    expect(await snapshot(t)).toBe(before);
  });
});
