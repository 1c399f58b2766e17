import fs from 'node:fs';
import path from 'node:path';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/test-app.ts';
import { standInBuild } from '../helpers/stand-in-build.ts';
import { registerSite } from '../../server/site/site.ts';
import { SHARE_TARGET_PATH } from '../../contract/site-routes.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');

/**
 * Issue 11 item 10: the site answers a path that is no route with 404 (the shell still renders
 * the app's 'Page Not Found'), every route of spec §2 with 200, and serves a real robots.txt.
 */
describe('site routes', () => {
  let t: TestApp;
  let site: FastifyInstance;
  let dist: string;

  beforeAll(async () => {
    // A stand-in build: the shell and what vite copies from public/ (the real robots.txt).
    dist = standInBuild({ 'robots.txt': fs.readFileSync(path.join(ROOT, 'public', 'robots.txt'), 'utf8') });
    t = await createTestApp('sqlite', {});
    site = Fastify();
    await registerSite(site, t.deps, dist);
  });
  afterAll(async () => {
    await site?.close();
    await t?.close();
    fs.rmSync(dist, { recursive: true, force: true });
  });

  it.each(['/', '/login', '/register?invite=abc', '/dashboard', '/dashboard/', '/admin/users', '/faq'])('answers the route %s with the app and 200', async (url) => {
    const res = await site.inject({ method: 'GET', url });
    expect(res.statusCode).toBe(200);
    expect(res.body).toContain('<div id="root">');
  });

  it.each(['/no-such-page', '/admin', '/admin/nope', '/uploaded/extra', '/wp-login.php'])('answers %s with the app and 404', async (url) => {
    const res = await site.inject({ method: 'GET', url });
    expect(res.statusCode).toBe(404);
    // The app still renders its own 'Page Not Found' screen with a link home.
    expect(res.body).toContain('<div id="root">');
    expect(res.headers['content-type']).toMatch(/text\/html/);
  });

  it('sends a share no service worker took to the app’s notice, without reading its files', async () => {
    const boundary = 'stashshare';
    const payload = `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="clip.mp4"\r\nContent-Type: video/mp4\r\n\r\n${'x'.repeat(2 * 1024 * 1024)}\r\n--${boundary}--\r\n`;
    const res = await site.inject({ method: 'POST', url: SHARE_TARGET_PATH, headers: { 'content-type': `multipart/form-data; boundary=${boundary}` }, payload });
    expect(res.statusCode).toBe(303);
    expect(res.headers.location).toBe('/dashboard?shared=failed');
    // Any other POST is still unknown.
    expect((await site.inject({ method: 'POST', url: '/dashboard', payload: 'x' })).statusCode).toBe(404);
  });

  it('serves robots.txt as text that keeps crawlers out of the signed-in area', async () => {
    const res = await site.inject({ method: 'GET', url: '/robots.txt' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/text\/plain/);
    expect(res.body).toMatch(/^User-agent: \*$/m);
    expect(res.body).toMatch(/^Disallow: \/admin\/$/m);
    expect(res.body).not.toContain('<div id="root">');
  });
});
