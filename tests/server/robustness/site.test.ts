import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../helpers/test-app.ts';
import { buildSite } from '../../../server/app.ts';

/** The site origin (design §2) with odd paths: never a 5xx, never a file from outside the build. */
describe('the site origin with odd requests', () => {
  let t: TestApp;
  let site: FastifyInstance;
  let root: string;
  const SECRET = 'SITE-SECRET-OUTSIDE-DIST';
  beforeAll(async () => {
    t = await createTestApp('sqlite');
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'stash-site-'));
    const dist = path.join(root, 'dist');
    fs.mkdirSync(path.join(dist, 'assets'), { recursive: true });
    fs.writeFileSync(path.join(dist, 'index.html'), '<!doctype html><title>shell</title>');
    fs.writeFileSync(path.join(dist, 'assets', 'app.js'), 'console.log(1)');
    fs.writeFileSync(path.join(root, 'secret.txt'), SECRET);
    site = await buildSite(t.deps, dist);
  });
  afterAll(async () => {
    await site?.close();
    await t?.close();
    fs.rmSync(root, { recursive: true, force: true });
  });

  const PATHS = ['/../secret.txt', '/..%2fsecret.txt', '/%2e%2e/secret.txt', '/%2e%2e%2fsecret.txt', '/assets/..%2f..%2fsecret.txt', '/..%5csecret.txt', '/%00', '/index.html%00.js', '/%', '/%zz', `/${'a'.repeat(20_000)}`, '/assets/', '/assets', '//secret.txt', '/config.json/..', '/.%2e/secret.txt'];

  it.each(PATHS)('GET %s neither fails nor leaks', async (url) => {
    for (const headers of [{}, { range: 'bytes=5-1' }, { range: 'bytes=0-99999999999999999999' }, { 'if-none-match': '*' }, { 'if-modified-since': 'garbage' }]) {
      const res = await site.inject({ method: 'GET', url, headers });
      expect(res.statusCode, `${url} ${JSON.stringify(headers)}`).toBeLessThan(500);
      expect(res.body).not.toContain(SECRET);
    }
  });

  it('other methods are a 4xx', async () => {
    for (const method of ['POST', 'PUT', 'DELETE'] as const) {
      const res = await site.inject({ method, url: '/index.html', payload: 'x' });
      expect(res.statusCode).toBeGreaterThanOrEqual(400);
      expect(res.statusCode).toBeLessThan(500);
    }
  });
});
