import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { contractEndpoints } from '../robustness/fuzz-helpers.ts';
import { createTestApp, DIALECTS, type TestApp } from '../../helpers/test-app.ts';
import { snapshot } from './fixtures.ts';

/**
 * Issue 8 item 8, design §5: 401 (no or bad credential) before 403 (role, ban) before 400
 * (body), even for a body the server cannot parse at all. The credential then can only be the
 * Bearer header, so that is what these requests carry.
 */
const BAD_BODIES: { name: string; payload: string; headers?: Record<string, string> }[] = [
  { name: 'malformed JSON', payload: '{"page": 1,' },
  { name: 'an empty body', payload: '' },
  { name: 'a __proto__ key', payload: '{"__proto__": {"isAdmin": true}}' },
  { name: 'a constructor.prototype key', payload: '{"constructor": {"prototype": {"isAdmin": true}}}' },
  { name: 'an oversized body', payload: '{}', headers: { 'content-length': String(2 * 1024 * 1024) } },
];

describe.each(DIALECTS)('refusal order for bodies that cannot be parsed on %s', (dialect) => {
  let t: TestApp;
  let plain: string;
  let banned: string;
  beforeAll(async () => {
    t = await createTestApp(dialect);
    plain = (await t.createUser()).token;
    banned = (await t.createUser({ banned: true })).token;
  });
  afterAll(async () => t?.close());

  const send = async (path: string, payload: string, headers: Record<string, string> = {}) => {
    const res = await t.api.inject({ method: 'POST', url: path, headers: { 'content-type': 'application/json', ...headers }, payload });
    return { status: res.statusCode, body: res.json<{ success: boolean; error: string }>() };
  };

  const signedIn = () => contractEndpoints().filter((ep) => !['/api/v1/auth/login', '/api/v1/auth/register'].includes(ep.path));
  const adminOnly = () => signedIn().filter((ep) => ep.path.startsWith('/api/v1/admin/'));

  it('answers 401 to every signed-in route, with no or a bad Bearer token, whatever the body', async () => {
    const before = await snapshot(t);
    for (const ep of signedIn()) {
      for (const b of BAD_BODIES) {
        for (const auth of [{}, { authorization: 'Bearer not-a-real-token' }] as Record<string, string>[]) {
          const res = await send(ep.path, b.payload, { ...b.headers, ...auth });
          expect(res.status, `${ep.path} with ${b.name}, ${JSON.stringify(auth)}`).toBe(401);
          expect(res.body.success).toBe(false);
        }
      }
    }
    expect(await snapshot(t)).toBe(before);
  });

  it('answers 403 to a banned caller, and to a default user on an admin route, before the body', async () => {
    for (const ep of signedIn()) {
      for (const b of BAD_BODIES) {
        const res = await send(ep.path, b.payload, { ...b.headers, authorization: `Bearer ${banned}` });
        expect(res.status, `${ep.path}, banned, ${b.name}`).toBe(403);
        expect(res.body.error).toBe('Your account has been banned.');
      }
    }
    for (const ep of adminOnly()) {
      for (const b of BAD_BODIES) {
        const res = await send(ep.path, b.payload, { ...b.headers, authorization: `Bearer ${plain}` });
        expect(res.status, `${ep.path}, default user, ${b.name}`).toBe(403);
        expect(res.body.error).toBe('You are not authorized to access this resource.');
      }
    }
  });

  it('keeps the body’s own 400 or 413 for a caller who may call the route', async () => {
    for (const ep of adminOnly()) {
      expect((await send(ep.path, '{"page": 1,', { authorization: `Bearer ${t.admin.token}` })).status).toBe(400);
      expect((await send(ep.path, '{}', { authorization: `Bearer ${t.admin.token}`, 'content-length': String(2 * 1024 * 1024) })).status).toBe(413);
    }
    // Public routes have nobody to refuse: the body's error stands.
    expect((await send('/api/v1/auth/login', '{"username": ')).status).toBe(400);
    expect((await send('/api/v1/auth/login', '{"__proto__": {}}', { authorization: 'Bearer not-a-real-token' })).status).toBe(400);
  });
});
