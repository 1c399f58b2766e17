import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import Fastify, { type FastifyInstance } from 'fastify';
import { JSDOM } from 'jsdom';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/test-app.ts';
import { registerSite } from '../../server/site/site.ts';
import { prerenderPublicPages } from '../../scripts/prerender.mjs';

const ROOT = path.resolve(import.meta.dirname, '../..');
const SHELL = '<!doctype html><html><head><title>Stash</title></head><body><div id="root"></div></body></html>';

/**
 * Issue 9: `/`, `/privacy`, `/tos` and `/faq` arrive already rendered (the build renders the real
 * components once, the site fills in this deployment's name, community link and contact
 * address), so they paint without JavaScript.
 */
describe('the public pages in their HTML', () => {
  let dist: string;
  const started: Array<{ t: TestApp; site: FastifyInstance }> = [];

  beforeAll(async () => {
    dist = fs.mkdtempSync(path.join(os.tmpdir(), 'stash-prerender-'));
    fs.writeFileSync(path.join(dist, 'index.html'), SHELL);
    await prerenderPublicPages(ROOT, dist);
  });
  afterAll(async () => {
    for (const { t, site } of started) {
      await site.close();
      await t.close();
    }
    fs.rmSync(dist, { recursive: true, force: true });
  });

  async function siteWith(env: Record<string, string>, distDir = dist): Promise<FastifyInstance> {
    const t = await createTestApp('sqlite', env);
    const site = Fastify();
    started.push({ t, site });
    await registerSite(site, t.deps, distDir);
    return site;
  }
  const documentOf = (html: string) => new JSDOM(html).window.document;

  it("paints this deployment's name and community link, escaped, from the HTML alone", async () => {
    const site = await siteWith({ SITE_NAME: `Tom & Jerry's <b>Files</b> $& $'`, COMMUNITY_URL: 'https://chat.example/join?a=1&b="2"&c=$&' });
    const res = await site.inject({ method: 'GET', url: '/' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/html/);
    const doc = documentOf(res.body);
    expect(doc.title).toBe(`Tom & Jerry's <b>Files</b> $& $' · Invite-only file hosting`);
    expect(doc.querySelector('#root h1')?.textContent).toBe(`Tom & Jerry's <b>Files</b> $& $'`);
    expect(doc.querySelector('#root b')).toBeNull();
    const community = [...doc.querySelectorAll('#root a')].find((a) => a.textContent === 'Join the community');
    expect(community?.getAttribute('href')).toBe('https://chat.example/join?a=1&b="2"&c=$&');
    expect(doc.querySelector('#root img')?.getAttribute('alt')).toContain(`The Tom & Jerry's <b>Files</b> $& $' app`);
    expect([...doc.querySelectorAll('#root a')].map((a) => a.getAttribute('href'))).toEqual(expect.arrayContaining(['/login', '/register']));
    expect(res.body).not.toContain('%%STASH');
  });

  it('leaves the community button out when no community channel is configured', async () => {
    const site = await siteWith({});
    const doc = documentOf((await site.inject({ method: 'GET', url: '/' })).body);
    expect(doc.querySelector('#root h1')?.textContent).toBe('Stash');
    expect([...doc.querySelectorAll('#root .hero-actions > *')].map((el) => el.textContent)).toEqual(['Login']);
  });

  it('paints the privacy policy, the terms and the FAQ with their titles and the contact address', async () => {
    // A name that spells another placeholder is still only a name.
    const name = `Tom & Jerry's <b>Files</b> $& %%STASH_CONTACT_EMAIL%%`;
    const site = await siteWith({ SITE_NAME: name, CONTACT_EMAIL: "o'brien+$&@mail.example" });
    const privacy = documentOf((await site.inject({ method: 'GET', url: '/privacy' })).body);
    expect(privacy.title).toBe(`Privacy Policy · ${name}`);
    expect(privacy.querySelector('#root h1')?.textContent).toBe('Privacy Policy');
    expect(privacy.querySelector('#root main p')?.textContent).toBe(`${name} keeps as little about you as it can to run the service.`);
    const mail = privacy.querySelector('#root a[href^="mailto:"]');
    expect(mail?.getAttribute('href')).toBe("mailto:o'brien+$&@mail.example");
    expect(mail?.textContent).toBe("o'brien+$&@mail.example");
    const tos = documentOf((await site.inject({ method: 'GET', url: '/tos' })).body);
    expect(tos.title).toBe(`Terms of Service · ${name}`);
    expect(tos.querySelector('#root main p')?.textContent).toBe(`By using ${name} you are granted a licence to use the service on these terms.`);
    const faq = documentOf((await site.inject({ method: 'GET', url: '/faq' })).body);
    expect(faq.title).toBe(`FAQ · ${name}`);
    expect(faq.querySelector('#root main')?.textContent).toContain('No donation wallets are listed yet.');
    // The layout's navigation marks the page it is on, as the app does.
    expect(faq.querySelector('#root nav a[aria-current="page"]')?.textContent).toBe('FAQ');
    for (const doc of [privacy, tos, faq]) expect(doc.querySelectorAll('#root main [href*="%%STASH"]')).toHaveLength(0);
  });

  it('says there is no contact address yet when none is configured', async () => {
    const site = await siteWith({});
    const privacy = documentOf((await site.inject({ method: 'GET', url: '/privacy' })).body);
    expect(privacy.querySelector('#root a[href^="mailto:"]')).toBeNull();
    expect(privacy.querySelector('#root main')?.textContent).toContain('who has not published a contact address here yet');
  });

  it('leaves the FAQ to the app when donation wallets are configured, and still prerenders the rest', async () => {
    const site = await siteWith({ DONATION_WALLETS: 'Bitcoin=bc1qexampleaddress' });
    expect((await site.inject({ method: 'GET', url: '/faq' })).body).toBe(SHELL);
    const landing = documentOf((await site.inject({ method: 'GET', url: '/' })).body);
    expect(landing.querySelector('#root h1')?.textContent).toBe('Stash');
  });

  it('answers other routes with the plain shell, which the app renders itself', async () => {
    const site = await siteWith({});
    for (const url of ['/login', '/dashboard', '/index.html']) {
      const res = await site.inject({ method: 'GET', url });
      expect(res.body, url).toBe(SHELL);
    }
  });

  it.each(['/', '/tos'])('sends %s compressed by Accept-Encoding, revalidated, and 304 for the copy the browser has', async (url) => {
    const site = await siteWith({});
    const plain = await site.inject({ method: 'GET', url });
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(plain.headers['cache-control']).toBe('no-cache');
    expect(String(plain.headers.vary)).toMatch(/accept-encoding/i);
    const br = await site.inject({ method: 'GET', url, headers: { 'accept-encoding': 'gzip, deflate, br' } });
    expect(br.headers['content-encoding']).toBe('br');
    expect(zlib.brotliDecompressSync(br.rawPayload).toString()).toBe(plain.body);
    const gz = await site.inject({ method: 'GET', url, headers: { 'accept-encoding': 'gzip' } });
    expect(zlib.gunzipSync(gz.rawPayload).toString()).toBe(plain.body);
    const again = await site.inject({ method: 'GET', url, headers: { 'if-none-match': String(plain.headers.etag) } });
    expect(again.statusCode).toBe(304);
    expect(again.body).toBe('');
    const head = await site.inject({ method: 'HEAD', url });
    expect(head.statusCode).toBe(200);
  });

  it('serves the plain shell for a build made before the prerender', async () => {
    const old = fs.mkdtempSync(path.join(os.tmpdir(), 'stash-prerender-old-'));
    try {
      fs.writeFileSync(path.join(old, 'index.html'), SHELL);
      const site = await siteWith({}, old);
      for (const url of ['/', '/privacy']) expect((await site.inject({ method: 'GET', url })).body).toBe(SHELL);
    } finally {
      fs.rmSync(old, { recursive: true, force: true });
    }
  });
});
