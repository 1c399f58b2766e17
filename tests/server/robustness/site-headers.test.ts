import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { buildSite } from '../../../server/app.ts';
import { createTestApp, type TestApp } from '../../helpers/test-app.ts';
import { standInBuild } from '../../helpers/stand-in-build.ts';

/** Design §11, issue 8 item 11: what the site origin tells the browser, and what it serves. */
describe('site origin security headers', () => {
  const cleanup: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const c of cleanup.splice(0).reverse()) await c();
  });

  async function site(env: Record<string, string> = {}) {
    const t: TestApp = await createTestApp('sqlite', { API_URL: 'https://api.example.test', FILES_URL: 'https://files.example.test', ...env });
    const root = standInBuild({
      'index.html': '<!doctype html><title>shell</title><script type="module" src="/assets/app.js"></script>',
      'assets/app.js': 'console.log(1)\n//# sourceMappingURL=app.js.map',
      'assets/app.js.map': '{"version":3,"sources":["src/secret-source.tsx"]}',
    });
    const app = await buildSite(t.deps, root);
    cleanup.push(async () => {
      await app.close();
      await t.close();
      fs.rmSync(root, { recursive: true, force: true });
    });
    return app;
  }

  const directives = (csp: string) => new Map(csp.split(';').map((d) => d.trim().split(/\s+/)).map(([name, ...values]) => [name ?? '', values]));

  it('sends a strict CSP, frame and sniffing protection and a referrer policy on every answer', async () => {
    const app = await site();
    for (const url of ['/', '/dashboard', '/assets/app.js', '/config.json']) {
      const res = await app.inject({ method: 'GET', url });
      expect(res.statusCode, url).toBe(200);
      const csp = directives(String(res.headers['content-security-policy']));
      expect(csp.get('script-src')).toEqual(["'self'"]);
      expect(csp.get('frame-ancestors')).toEqual(["'none'"]);
      expect(csp.get('object-src')).toEqual(["'none'"]);
      expect(csp.get('connect-src')).toEqual(["'self'", 'https://api.example.test', 'https://files.example.test']);
      expect(csp.get('img-src')).toContain('https://files.example.test');
      expect(csp.get('media-src')).toContain('https://files.example.test');
      expect(csp.get('frame-src')).toEqual(["'none'"]);
      expect(res.headers['x-content-type-options']).toBe('nosniff');
      expect(res.headers['x-frame-options']).toBe('DENY');
      expect(res.headers['referrer-policy']).toBe('strict-origin-when-cross-origin');
    }
  });

  it('lets in the captcha and Sentry origins only when they are configured', async () => {
    const app = await site({ HCAPTCHA_SECRET: 's', HCAPTCHA_SITE_KEY: 'k', TURNSTILE_SECRET: 't', TURNSTILE_SITE_KEY: 'u', SENTRY_DSN: 'https://abc123@o1.ingest.sentry.io/42' });
    const csp = directives(String((await app.inject({ method: 'GET', url: '/' })).headers['content-security-policy']));
    expect(csp.get('script-src')).toEqual(["'self'", 'https://hcaptcha.com', 'https://*.hcaptcha.com', 'https://challenges.cloudflare.com']);
    expect(csp.get('frame-src')).toEqual(['https://hcaptcha.com', 'https://*.hcaptcha.com', 'https://challenges.cloudflare.com']);
    expect(csp.get('connect-src')).toContain('https://o1.ingest.sentry.io');
  });

  it('serves source maps only with SERVE_SOURCE_MAPS=true', async () => {
    const closed = await site();
    // The static server decodes the path: "%2Emap" and "ma%70" are ".map" to it.
    for (const url of ['/assets/app.js.map', '/assets/app.js%2Emap', '/assets/app.js%2emap', '/assets/app.js.ma%70', '/assets/app.js.MAP?x=1']) {
      const hidden = await closed.inject({ method: 'GET', url });
      expect(hidden.statusCode, url).toBe(404);
      expect(hidden.body, url).not.toContain('secret-source');
    }
    const open = await site({ SERVE_SOURCE_MAPS: 'true' });
    const shown = await open.inject({ method: 'GET', url: '/assets/app.js.map' });
    expect(shown.statusCode).toBe(200);
    expect(shown.body).toContain('secret-source');
  });
});

describe.skipIf(!fs.existsSync(path.resolve(import.meta.dirname, '../../../dist/index.html')))('the built web app', () => {
  it('has no inline script for the CSP to block', () => {
    const html = fs.readFileSync(path.resolve(import.meta.dirname, '../../../dist/index.html'), 'utf8');
    const scripts = [...html.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/gi)];
    expect(scripts.length).toBeGreaterThan(0);
    for (const [, attrs, body] of scripts) {
      expect(attrs).toMatch(/\bsrc=/);
      expect(body?.trim()).toBe('');
    }
    expect(html).not.toMatch(/\son[a-z]+=/i);
  });
});
