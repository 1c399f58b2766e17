import crypto from 'node:crypto';
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { createTestApp, DIALECTS, type TestApp } from '../../helpers/test-app.ts';

/**
 * Issue 8 item 6, design §6: login and register are limited per client IP whatever the request
 * carries; refused requests (401, 400, 413) count; the files host is limited per IP; the keys
 * that hold an IP are hashed and expire with their window.
 */
const REDIS_URL = process.env.TEST_REDIS_URL;

interface Shot {
  status: number;
  headers: Record<string, unknown>;
}

async function post(t: TestApp, url: string, payload: string, headers: Record<string, string> = {}, ip = '198.51.100.1'): Promise<Shot> {
  const res = await t.api.inject({ method: 'POST', url, remoteAddress: ip, headers: { 'content-type': 'application/json', ...headers }, payload });
  return { status: res.statusCode, headers: res.headers };
}

const badLogin = JSON.stringify({ username: 'nobody', password: 'wrong-password' });

describe.each(DIALECTS)('rate-limit keys on %s', (dialect) => {
  let t: TestApp;
  afterEach(async () => t?.close());

  it('a valid Bearer header does not buy more logins or registrations from one address', async () => {
    t = await createTestApp(dialect, { RATE_LIMITS: 'on' });
    const user = await t.createUser();
    const bearer = { authorization: `Bearer ${user.token}` };
    for (let i = 0; i < 10; i++) expect((await post(t, '/api/v1/auth/login', badLogin)).status).toBe(401);
    const withBearer = await post(t, '/api/v1/auth/login', badLogin, bearer);
    expect(withBearer.status).toBe(429);
    expect(Number(withBearer.headers['retry-after'])).toBeGreaterThan(0);
    // Another address still gets its own ten.
    expect((await post(t, '/api/v1/auth/login', badLogin, {}, '198.51.100.2')).status).toBe(401);

    const reg = JSON.stringify({ username: 'someone', password: 'password-1', invitekey: 'nope' });
    for (let i = 0; i < 5; i++) expect((await post(t, '/api/v1/auth/register', reg, bearer)).status).toBe(400);
    expect((await post(t, '/api/v1/auth/register', reg, bearer)).status).toBe(429);
  });

  it('refused requests count: random Bearer tokens, malformed and oversized bodies reach 429', async () => {
    t = await createTestApp(dialect, { RATE_LIMITS: 'on' });
    const statuses: number[] = [];
    for (let i = 0; i < 310; i++) {
      const kind = i % 3;
      const res =
        kind === 0
          ? await post(t, '/api/v1/auth/data', '{}', { authorization: `Bearer ${crypto.randomBytes(16).toString('hex')}` })
          : kind === 1
            ? await post(t, '/api/v1/utils/settings', '{"token": ', {})
            : await post(t, '/api/v1/auth/data', '{}', { 'content-length': String(2 * 1024 * 1024) });
      statuses.push(res.status);
    }
    expect(statuses.slice(0, 300).every((s) => s === 401 || s === 400 || s === 413)).toBe(true);
    expect(statuses.slice(300).every((s) => s === 429)).toBe(true);
  });

  it('the files host answers 429 past FILES_RATE_LIMIT from one address', async () => {
    t = await createTestApp(dialect, { RATE_LIMITS: 'on', FILES_RATE_LIMIT: '5' });
    const get = (ip: string) => t.files.inject({ method: 'GET', url: '/AAAAAAAAAA.png', remoteAddress: ip });
    for (let i = 0; i < 5; i++) expect((await get('192.0.2.9')).statusCode).toBe(404);
    const over = await get('192.0.2.9');
    expect(over.statusCode).toBe(429);
    expect(over.json()).toMatchObject({ success: false, error: expect.stringMatching(/Too many requests/) });
    expect((await get('192.0.2.10')).statusCode).toBe(404);
    // Health checks from a load balancer are never limited.
    for (let i = 0; i < 3; i++) expect((await t.files.inject({ method: 'GET', url: '/healthz', remoteAddress: '192.0.2.9' })).statusCode).toBe(200);
  });

  describe.skipIf(!REDIS_URL)('with Redis (TEST_REDIS_URL)', () => {
    it('stores no address in a key, and every key expires within its window', async () => {
      const namespace = `stash-test-${crypto.randomBytes(6).toString('hex')}:`;
      t = await createTestApp(dialect, { RATE_LIMITS: 'on', REDIS_URL: REDIS_URL ?? '' }, { rateLimitNamespace: namespace });
      const ip = '203.0.113.77';
      expect((await post(t, '/api/v1/auth/login', badLogin, {}, ip)).status).toBe(401);
      expect((await post(t, '/api/v1/auth/data', '{}', {}, ip)).status).toBe(401);
      const redis = new Redis(REDIS_URL ?? '');
      try {
        const keys = (await redis.keys(`${namespace}*`)).filter((k) => !k.endsWith('salt'));
        expect(keys.length).toBeGreaterThanOrEqual(2);
        for (const key of keys) {
          expect(key).not.toContain(ip);
          expect(key).not.toContain('203.0.113');
          const ttl = await redis.pttl(key);
          expect(ttl, key).toBeGreaterThan(0);
          expect(ttl, key).toBeLessThanOrEqual(60_000);
        }
      } finally {
        const all = await redis.keys(`${namespace}*`);
        if (all.length > 0) await redis.del(...all);
        await redis.quit();
      }
    });
  });
});
