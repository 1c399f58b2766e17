import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIALECTS, createTestApp, type TestApp } from '../../helpers/test-app.ts';
import { snapshot } from '../accounts/fixtures.ts';
import { contractEndpoints } from './fuzz-helpers.ts';

/**
 * Spec §7: every call is a POST. Other methods are a 4xx that changes nothing, and CORS admits
 * the site's origin only (design §2: the token lives in the site's storage).
 */

const SITE = 'http://localhost:8080';
const FOREIGN = 'https://evil.example';

describe.each(DIALECTS)('methods and CORS on the API on %s (design §2, §5)', (dialect) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp(dialect, { SITE_URL: SITE });
  });
  afterAll(async () => t?.close());

  const paths = [...contractEndpoints().map((e) => e.path), '/api/v1/files/upload'];

  it('GET, PUT, DELETE, PATCH and HEAD on every POST route are a 4xx and change nothing', async () => {
    const before = await snapshot(t);
    const failures: string[] = [];
    for (const path of paths) {
      for (const method of ['GET', 'PUT', 'DELETE', 'PATCH', 'HEAD'] as const) {
        const res = await t.api.inject({
          method,
          url: path,
          headers: { authorization: `Bearer ${t.admin.token}`, 'content-type': 'application/json' },
          ...(method === 'GET' || method === 'HEAD' ? {} : { payload: '{}' }),
        });
        const okShape = method === 'HEAD' || (res.json<{ success?: unknown }>().success === false && typeof res.json<{ error?: unknown }>().error === 'string');
        if (res.statusCode < 400 || res.statusCode >= 500 || !okShape) failures.push(`${method} ${path} -> ${res.statusCode} ${res.body.slice(0, 100)}`);
      }
    }
    expect(failures).toEqual([]);
    expect(await snapshot(t)).toBe(before);
  });

  it('a preflight from a foreign origin is not allowed', async () => {
    for (const path of paths) {
      const res = await t.api.inject({
        method: 'OPTIONS',
        url: path,
        headers: { origin: FOREIGN, 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type, authorization' },
      });
      expect(res.statusCode, path).toBeLessThan(500);
      // A browser allows the call only when the answer names its origin (or '*').
      expect(res.headers['access-control-allow-origin'], path).not.toBe(FOREIGN);
      expect(res.headers['access-control-allow-origin'], path).not.toBe('*');
      expect(res.headers['access-control-allow-credentials'], path).toBeUndefined();
    }
  });

  it('a simple POST from a foreign origin gets no CORS permission to read the answer', async () => {
    const res = await t.api.inject({ method: 'POST', url: '/api/v1/auth/data', headers: { origin: FOREIGN, 'content-type': 'application/json' }, payload: JSON.stringify({ token: t.admin.token }) });
    expect(res.headers['access-control-allow-origin']).not.toBe(FOREIGN);
    expect(res.headers['access-control-allow-origin']).not.toBe('*');
  });

  it('a preflight from SITE_URL is allowed for POST with Content-Type and Authorization', async () => {
    for (const path of paths) {
      const res = await t.api.inject({
        method: 'OPTIONS',
        url: path,
        headers: { origin: SITE, 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type, authorization' },
      });
      expect(res.statusCode, path).toBeGreaterThanOrEqual(200);
      expect(res.statusCode, path).toBeLessThan(300);
      expect(res.headers['access-control-allow-origin'], path).toBe(SITE);
      expect(String(res.headers['access-control-allow-methods']), path).toContain('POST');
      expect(String(res.headers['access-control-allow-headers']).toLowerCase(), path).toContain('authorization');
      expect(String(res.headers['access-control-allow-headers']).toLowerCase(), path).toContain('content-type');
    }
  });

  it('odd OPTIONS requests (no origin, no method asked, unknown path) are never a 5xx', async () => {
    for (const headers of [{}, { origin: SITE }, { origin: 'null' }, { origin: '%%%' }, { origin: FOREIGN, 'access-control-request-method': 'DELETE' }]) {
      for (const url of ['/api/v1/auth/data', '/api/v1/nope', '/']) {
        const res = await t.api.inject({ method: 'OPTIONS', url, headers });
        expect(res.statusCode, `${url} ${JSON.stringify(headers)}`).toBeLessThan(500);
      }
    }
  });
});
