import { spawn, spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import net from 'node:net';
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { createTestApp, DIALECTS, type TestApp } from '../../helpers/test-app.ts';

// Design §6 limits (login 10/min) must hold for the deployment, not per API process (README
// "Deployment at scale"). The apps here are two API processes behind one load balancer.
const REDIS_URL = process.env.TEST_REDIS_URL;

const HAS_REDIS_SERVER = spawnSync('redis-server', ['--version']).status === 0;

const badLogin = (t: TestApp) => t.call('/api/v1/auth/login', { username: 'nobody', password: 'wrong-password' });

/** A port nothing listens on: Redis "down" without stopping the real one. */
async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe.each(DIALECTS)('rate limits across API processes on %s', (dialect) => {
  const apps: TestApp[] = [];
  afterEach(async () => {
    await Promise.all(apps.splice(0).map((a) => a.close()));
  });
  const start = async (env: Record<string, string>, namespace?: string) => {
    const app = await createTestApp(dialect, { RATE_LIMITS: 'on', ...env }, namespace ? { rateLimitNamespace: namespace } : {});
    apps.push(app);
    return app;
  };

  describe.skipIf(!REDIS_URL)('with Redis (TEST_REDIS_URL)', () => {
    let namespace = '';
    afterEach(async () => {
      // Leave the shared Redis as it was found.
      const redis = new Redis(REDIS_URL ?? '');
      const keys = await redis.keys(`${namespace}*`);
      if (keys.length > 0) await redis.del(...keys);
      await redis.quit();
    });

    it('counts logins on both processes against one limit: the 11th gets 429 with Retry-After', async () => {
      namespace = `stash-test-${crypto.randomBytes(6).toString('hex')}:`;
      const a = await start({ REDIS_URL: REDIS_URL ?? '' }, namespace);
      const b = await start({ REDIS_URL: REDIS_URL ?? '' }, namespace);
      for (let i = 0; i < 6; i++) expect((await badLogin(a)).status).toBe(401);
      for (let i = 0; i < 4; i++) expect((await badLogin(b)).status).toBe(401);
      const eleventh = await badLogin(b);
      expect(eleventh.status).toBe(429);
      expect(Number(eleventh.headers['retry-after'])).toBeGreaterThan(0);
      expect(eleventh.body).toMatchObject({ success: false, error: expect.stringMatching(/Too many requests/) });
      // The other process refuses too: the count is shared, not copied.
      expect((await badLogin(a)).status).toBe(429);
    });

    it('keeps the counters under the namespace in Redis', async () => {
      namespace = `stash-test-${crypto.randomBytes(6).toString('hex')}:`;
      const a = await start({ REDIS_URL: REDIS_URL ?? '' }, namespace);
      expect((await badLogin(a)).status).toBe(401);
      const redis = new Redis(REDIS_URL ?? '');
      const keys = await redis.keys(`${namespace}*`);
      await redis.quit();
      expect(keys.some((k) => k.includes('/api/v1/auth/login'))).toBe(true);
    });
  });

  it('without Redis each process counts alone, so the same 11 logins all pass', async () => {
    const a = await start({});
    const b = await start({});
    for (let i = 0; i < 6; i++) expect((await badLogin(a)).status).toBe(401);
    for (let i = 0; i < 5; i++) expect((await badLogin(b)).status).toBe(401);
  });

  it('keeps answering when Redis is unreachable: /healthz is 200 and calls are not refused', async () => {
    const a = await start({ REDIS_URL: `redis://127.0.0.1:${await closedPort()}` });
    const health = await a.api.inject({ method: 'GET', url: '/healthz' });
    expect(health.statusCode).toBe(200);
    expect(health.json()).toEqual({ ok: true });
    // Fail open: more than the 10/min login limit, every one answered by the login service itself.
    for (let i = 0; i < 12; i++) expect((await badLogin(a)).status).toBe(401);
    const u = await a.createUser();
    expect((await a.call('/api/v1/auth/login', { username: u.username, password: u.password })).status).toBe(200);
  });

  it.skipIf(!HAS_REDIS_SERVER)('enforces the limits again once Redis comes back, without a restart', async () => {
    const port = await closedPort();
    const a = await start({ REDIS_URL: `redis://127.0.0.1:${port}` });
    expect((await badLogin(a)).status).toBe(401);
    const server = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
    try {
      const deadline = Date.now() + 10_000;
      while (a.deps.redis?.status !== 'ready' && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
      expect(a.deps.redis?.status).toBe('ready');
      for (let i = 0; i < 10; i++) expect((await badLogin(a)).status).toBe(401);
      expect((await badLogin(a)).status).toBe(429);
    } finally {
      await Promise.all(apps.splice(0).map((x) => x.close()));
      server.kill();
    }
  });
});
