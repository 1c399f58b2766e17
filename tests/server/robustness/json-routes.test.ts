import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TSchema } from 'typebox';
import type { Endpoint } from '../../../contract/common.ts';
import { DIALECTS, createTestApp, type TestApp, type TestUser } from '../../helpers/test-app.ts';
import { snapshot } from '../accounts/fixtures.ts';
import { HOSTILE_STRINGS, contractEndpoints, prng, randomJson, randomObject, sampleOf, wrongValuesFor } from './fuzz-helpers.ts';

/**
 * The brief's rule, for every JSON call of spec §7: "Bad input everywhere gets a clear message,
 * a 4xx, and changes nothing. No 500 for anything a client can send." (design §5)
 */

interface Case {
  name: string;
  payload: string | Buffer | undefined;
  contentType?: string | null;
  /** Which credential rides along; admin reaches every handler. */
  as?: 'admin' | 'user' | 'none' | 'bogus' | 'huge';
}

const SEED = 0x5eed;
const RANDOM_CASES_PER_ROUTE = 12;

function nested(depth: number, open: string, close: string, inner = '1'): string {
  return open.repeat(depth) + inner + close.repeat(depth);
}

/**
 * Bodies that are wrong for every route, whatever its schema: made once for all routes, as bytes
 * (built per route, the large ones — 1.1 MB, 150,000-element arrays, 100,000-deep nesting — and
 * the concatenated strings V8 keeps as ropes cost the suite more CPU than the server's answers).
 */
const RAW_CASES: Case[] = rawCases().map((c) => (typeof c.payload === 'string' ? { ...c, payload: Buffer.from(c.payload, 'utf8') } : c));

function rawCases(): Case[] {
  const deepObject = `${'{"a":'.repeat(1000)}1${'}'.repeat(1000)}`;
  return [
    { name: 'invalid JSON', payload: '{"a": 1,' },
    { name: 'empty body', payload: '' },
    { name: 'no body at all', payload: undefined },
    { name: 'whitespace only', payload: '   \n ' },
    { name: 'JSON null', payload: 'null' },
    { name: 'JSON string', payload: '"hello"' },
    { name: 'JSON number 1e309', payload: '1e309' },
    { name: 'bare NaN', payload: 'NaN' },
    { name: 'bare -0', payload: '-0' },
    { name: 'an array', payload: '[]' },
    { name: 'array nested 1000 deep', payload: nested(1000, '[', ']') },
    { name: 'object nested 1000 deep', payload: deepObject },
    { name: 'object nested 1000 deep under a known key', payload: `{"filters":${deepObject}}` },
    { name: 'array nested 100000 deep', payload: nested(100_000, '[', ']') },
    { name: 'huge array', payload: `[${Array.from({ length: 150_000 }, () => '0').join(',')}]` },
    { name: 'huge array in an unknown field', payload: `{"x":[${Array.from({ length: 150_000 }, () => '1').join(',')}]}` },
    { name: '__proto__ key', payload: '{"__proto__":{"isAdmin":true}}' },
    { name: 'nested __proto__ key', payload: '{"filters":{"__proto__":{"polluted":1}}}' },
    { name: 'constructor.prototype', payload: '{"constructor":{"prototype":{"polluted":1}}}' },
    { name: 'duplicate keys', payload: '{"page":1,"page":"x","zz":1}' },
    { name: 'NUL byte in the raw body', payload: Buffer.from('{"a":"\u0000"}\u0000', 'utf8') },
    { name: 'invalid UTF-8', payload: Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xc3, 0x28, 0xff, 0xfe, 0x22, 0x7d]) },
    { name: 'a byte-order mark', payload: '\ufeff{"zz":1}' },
    { name: 'lone surrogate escape in a key', payload: '{"\\ud800":1}' },
    { name: 'over the 1 MiB limit', payload: JSON.stringify({ pad: 'x'.repeat(1_100_000) }) },
    { name: 'text/plain', payload: '{}', contentType: 'text/plain' },
    { name: 'form-urlencoded', payload: 'page=1&limit=2', contentType: 'application/x-www-form-urlencoded' },
    { name: 'no content type', payload: '{}', contentType: null },
    { name: 'JSON with charset utf-16', payload: '{"zz":1}', contentType: 'application/json; charset=utf-16' },
    { name: 'a vendor +json type', payload: '{"zz":1}', contentType: 'application/vnd.api+json' },
    { name: 'multipart to a JSON route', payload: '--b\r\nContent-Disposition: form-data; name="a"\r\n\r\n1\r\n--b--\r\n', contentType: 'multipart/form-data; boundary=b' },
    { name: 'a bogus token in the body', payload: JSON.stringify({ token: 'not-a-token', zz: 1 }), as: 'none' },
    { name: 'a NUL token in the body', payload: JSON.stringify({ token: '\u0000' }), as: 'none' },
    { name: 'a lone-surrogate token in the body', payload: JSON.stringify({ token: '\ud800x' }), as: 'none' },
    { name: 'a token of the wrong type', payload: JSON.stringify({ token: ['x'] }), as: 'none' },
    { name: 'a 100 000-character token in the body', payload: JSON.stringify({ token: `stash_${'x'.repeat(100_000)}` }), as: 'none' },
    { name: 'an 8 KB bearer header', payload: '{"zz":1}', as: 'huge' },
  ];
}

/** A known field made wrong while every other field stays right: these reach the schema's field rules. */
function fieldCases(ep: Endpoint<TSchema, TSchema>): Case[] {
  const base = sampleOf(ep.body) as Record<string, unknown>;
  const props = ((ep.body as unknown as { properties?: Record<string, unknown> }).properties ?? {}) as Record<string, Record<string, unknown>>;
  const cases: Case[] = [];
  for (const [field, schema] of Object.entries(props)) {
    if (field === 'token') continue;
    const inner = Array.isArray(schema.anyOf) ? ((schema.anyOf as Record<string, unknown>[])[0] ?? schema) : schema;
    for (const value of wrongValuesFor(inner)) {
      cases.push({ name: `${field} = ${JSON.stringify(value)?.slice(0, 40)}`, payload: JSON.stringify({ ...base, [field]: value }) });
    }
    if (inner.type === 'string' && inner.const === undefined) {
      for (const value of HOSTILE_STRINGS) {
        cases.push({ name: `${field} = hostile ${JSON.stringify(value)}`, payload: JSON.stringify({ ...base, [field]: value }) });
      }
    }
  }
  return cases;
}

function randomCases(rand: () => number): Case[] {
  const who = ['admin', 'admin', 'user', 'none', 'bogus', 'huge'] as const;
  return Array.from({ length: RANDOM_CASES_PER_ROUTE }, (_, i) => {
    const value = i % 3 === 0 ? randomJson(rand) : randomObject(rand);
    // A random value that happens to be `{}` could be a valid call; an object always carries an unknown key.
    const payload = JSON.stringify(value) ?? 'null';
    return { name: `random #${i}: ${payload.slice(0, 60)}`, payload, as: who[Math.floor(rand() * who.length)] };
  });
}

describe.each(DIALECTS)('every JSON route refuses bad bodies on %s (design §5)', (dialect) => {
  let t: TestApp;
  let user: TestUser;
  beforeAll(async () => {
    t = await createTestApp(dialect);
    user = await t.createUser();
  });
  afterAll(async () => t?.close());

  const endpoints = contractEndpoints();

  it('walks the whole contract', () => {
    // Guards the walk itself: losing a contract module would silently shrink the test.
    expect(endpoints.length).toBeGreaterThanOrEqual(40);
    expect(endpoints.map((e) => e.path)).toContain('/api/v1/admin/get/users');
    expect(endpoints.map((e) => e.path)).toContain('/api/v1/files/upload-url');
  });

  it.each(contractEndpoints().map((e) => [e.path, e] as const))('%s: a 4xx with a message and no change', async (_path, ep) => {
    const rand = prng(SEED ^ [...ep.path].reduce((h, c) => (h * 31 + c.charCodeAt(0)) | 0, 0));
    const cases = [...RAW_CASES, ...fieldCases(ep), ...randomCases(rand)];
    const before = await snapshot(t);
    const failures: string[] = [];
    for (const c of cases) {
      const as = c.as ?? 'admin';
      const token = as === 'admin' ? t.admin.token : as === 'user' ? user.token : as === 'bogus' ? 'stash_bogus' : as === 'huge' ? `stash_${'\u00ff'.repeat(8000)}` : null;
      const headers: Record<string, string> = {};
      if (c.contentType !== null) headers['content-type'] = c.contentType ?? 'application/json';
      if (token) headers.authorization = `Bearer ${token}`;
      const res = await t.api.inject({ method: 'POST', url: ep.path, headers, payload: c.payload });
      let body: unknown;
      try {
        body = res.json();
      } catch {
        body = res.body;
      }
      const b = body as { success?: unknown; error?: unknown };
      const errorOk =
        (typeof b?.error === 'string' && b.error.length > 0) ||
        (typeof b?.error === 'object' && b.error !== null && typeof (b.error as { error?: unknown }).error === 'string');
      if (res.statusCode < 400 || res.statusCode >= 500 || b?.success !== false || !errorOk) {
        failures.push(`${c.name} [${as}] -> ${res.statusCode} ${res.body.slice(0, 200)}`);
      }
    }
    expect(failures).toEqual([]);
    expect(await snapshot(t)).toBe(before);
    // The session used for every call is still good: nothing above signed it out.
    expect((await t.call('/api/v1/auth/data', {}, { token: t.admin.token })).status).toBe(200);
  });
});
