import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN, startStack, type Stack } from './harness.ts';
import { DESKTOP, PHONE, screenshot } from './page-checks.ts';

// Every page's layout, axe and console checks: pages-public.e2e.ts and pages-signed-in.e2e.ts.
let stack: Stack;
let adminToken: string;

beforeAll(async () => {
  stack = await startStack();
  adminToken = await stack.login(ADMIN.username, ADMIN.password);
});
afterAll(async () => {
  await stack?.stop();
});

// Issue 9, first paint: every route waits for /config.json before it renders (src/main.tsx). The
// shell asks for it beside its scripts (a preload in index.html) and the app takes that response
// rather than asking again one round trip later.
describe('the site configuration on a cold load', () => {
  for (const [route, token] of [['/', null], ['/login', null], ['/dashboard', 'admin']] as const) {
    it(`is fetched once, by the shell's preload, for ${route}`, async () => {
      const w = await stack.openPage(PHONE);
      try {
        if (token) await w.context.addInitScript((t) => localStorage.setItem('token', t), adminToken);
        await w.page.goto(stack.siteUrl + route);
        await w.page.locator('h1').first().waitFor({ timeout: 15_000 });
        const asked = await w.page.evaluate(() =>
          performance
            .getEntriesByType('resource')
            .filter((e) => new URL(e.name).pathname === '/config.json')
            .map((e) => (e as PerformanceResourceTiming).initiatorType),
        );
        expect(asked).toEqual(['link']);
        expect(w.errors).toEqual([]);
      } finally {
        await w.close();
      }
    });
  }
});

// The landing picture is the first screen's Largest Contentful Paint, so it carries
// fetchPriority="high" (src/features/public/landing-page.tsx). Without it Chromium asks for an
// image at Low, or Medium for the first few large ones, and raises it only after layout; the
// request's initial priority, as the DevTools Protocol reports it, shows which one it got.
describe('the landing page on a cold load', () => {
  it('the landing picture, the first screen’s largest paint, is fetched at high priority', async () => {
    const w = await stack.openPage(PHONE);
    try {
      const cdp = await w.context.newCDPSession(w.page);
      const requests: { url: string; initialPriority: string }[] = [];
      cdp.on('Network.requestWillBeSent', (e) => requests.push({ url: e.request.url, initialPriority: e.request.initialPriority }));
      await cdp.send('Network.enable');
      await w.page.goto(stack.siteUrl + '/');
      const picture = w.page.getByRole('img', { name: /app on a phone/ });
      await expect.poll(() => picture.evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth > 0)).toBe(true);
      // The URL the browser chose (the <picture> has a dark-scheme source), not one spelled here.
      const src = await picture.evaluate((img: HTMLImageElement) => img.currentSrc);
      expect(requests.filter((r) => r.url === src).map((r) => r.initialPriority)).toEqual(['High']);
      expect(w.errors).toEqual([]);
    } finally {
      await w.close();
    }
  });
});

// Issue 9, first paint: `/`, `/privacy`, `/tos` and `/faq` are served with their content already in
// the HTML (server/site/prerendered.ts), so they paint before, and without, any JavaScript; when the
// app starts, its first render finds the same nodes and keeps them (no flash, no second largest
// paint).
describe('the public pages from their HTML', () => {
  it('paints, styled, with JavaScript turned off', async () => {
    const context = await stack.browser.newContext({ viewport: PHONE, javaScriptEnabled: false });
    try {
      const page = await context.newPage();
      await page.goto(stack.siteUrl + '/');
      await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent()).toBe('Stash');
      expect(await page.getByRole('link', { name: 'Login', exact: true }).last().isVisible()).toBe(true);
      expect(await page.getByRole('link', { name: 'Register with an invite' }).isVisible()).toBe(true);
      expect(await page.getByRole('img', { name: /app on a phone/ }).isVisible()).toBe(true);
      // The stylesheet applies: at phone width the navigation is folded behind its toggle.
      expect(await page.getByRole('button', { name: 'Menu' }).isVisible()).toBe(true);
      expect(await page.getByRole('link', { name: 'Privacy Policy' }).isVisible()).toBe(false);
      await screenshot(page, 'landing-390-no-javascript');
      // The toggle is the browser's own (a popover): the menu opens and its links lead on.
      await page.getByRole('button', { name: 'Menu' }).click();
      // It drops down from right under the header, across the page.
      const header = (await page.getByRole('banner').boundingBox())!;
      const menu = (await page.getByRole('navigation', { name: 'Main' }).boundingBox())!;
      expect(Math.abs(menu.y - (header.y + header.height))).toBeLessThan(1);
      expect(menu.width).toBe(PHONE.width);
      await screenshot(page, 'landing-390-no-javascript-menu');
      await page.getByRole('link', { name: 'Privacy Policy' }).click();
      await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent()).toBe('Privacy Policy');
    } finally {
      await context.close();
    }
  });

  // `/`'s picture is its largest paint; the FAQ's heading stands for a text page.
  it.each([
    ['/', '#root img'],
    ['/faq', '#root h1'],
  ])('%s is taken over by the app without replacing a node', async (url, selector) => {
    const w = await stack.openPage(PHONE);
    try {
      // Before the page's own scripts: remember the element as parsed from the HTML and count
      // every element the app takes out of the document.
      await w.context.addInitScript((selector) => {
        const seen = window as unknown as { parsed: Element | null; removed: string[] };
        seen.parsed = null;
        seen.removed = [];
        // 'interactive': the document is parsed and no module script has run yet.
        document.addEventListener('readystatechange', () => {
          if (document.readyState === 'interactive') seen.parsed = document.querySelector(selector);
        });
        new MutationObserver((records) => {
          for (const r of records) for (const n of Array.from(r.removedNodes)) if (n instanceof Element) seen.removed.push(n.outerHTML.slice(0, 80));
        }).observe(document, { childList: true, subtree: true });
      }, selector);
      await w.page.goto(stack.siteUrl + url);
      // The app registers its service worker once it has started (src/lib/pwa.ts, after the first render).
      await expect.poll(() => w.page.evaluate(async () => (await navigator.serviceWorker.getRegistration()) !== undefined)).toBe(true);
      const kept = await w.page.evaluate((selector) => {
        const seen = window as unknown as { parsed: Element | null; removed: string[] };
        return { sameElement: seen.parsed !== null && seen.parsed === document.querySelector(selector), removed: seen.removed };
      }, selector);
      expect(kept).toEqual({ sameElement: true, removed: [] });
      // The app's own links work on the taken-over page: off to the terms from the menu, without a
      // reload, and the menu folds away behind it.
      await w.page.evaluate(() => ((window as unknown as { sameDocument: boolean }).sameDocument = true));
      await w.page.getByRole('button', { name: 'Menu' }).click();
      await w.page.getByRole('link', { name: 'Terms of Service' }).click();
      await expect.poll(() => w.page.getByRole('heading', { level: 1 }).textContent()).toBe('Terms of Service');
      expect(await w.page.evaluate(() => (window as unknown as { sameDocument?: boolean }).sameDocument)).toBe(true);
      await expect.poll(() => w.page.getByRole('link', { name: 'Privacy Policy' }).isVisible()).toBe(false);
      expect(w.errors).toEqual([]);
    } finally {
      await w.close();
    }
  });

  it('the privacy policy, the terms and the FAQ paint with JavaScript turned off', async () => {
    const context = await stack.browser.newContext({ viewport: PHONE, javaScriptEnabled: false });
    try {
      const page = await context.newPage();
      for (const [url, heading] of [['/privacy', 'Privacy Policy'], ['/tos', 'Terms of Service'], ['/faq', 'FAQ']]) {
        await page.goto(stack.siteUrl + url);
        expect(await page.getByRole('heading', { level: 1 }).textContent(), url).toBe(heading);
        expect(await page.title(), url).toBe(`${heading} · Stash`);
        expect(await page.getByRole('banner').getByRole('link', { name: 'Stash' }).isVisible(), url).toBe(true);
      }
      expect(await page.getByRole('table').getByRole('cell', { name: '$131' }).isVisible()).toBe(true);
    } finally {
      await context.close();
    }
  });

  it('the menu opens and closes on a page the app renders itself', async () => {
    const w = await stack.openPage(PHONE);
    try {
      // /login is not prerendered: the layout is rendered by the app, not taken over.
      await w.page.goto(stack.siteUrl + '/login');
      await w.page.getByRole('heading', { name: 'Login' }).waitFor();
      const privacy = w.page.getByRole('link', { name: 'Privacy Policy' });
      expect(await privacy.isVisible()).toBe(false);
      await w.page.getByRole('button', { name: 'Menu' }).click();
      await expect.poll(() => privacy.isVisible()).toBe(true);
      await w.page.keyboard.press('Escape');
      await expect.poll(() => privacy.isVisible()).toBe(false);
      // Off to the FAQ from the menu, open it again, and the back button: the login page, folded.
      await w.page.getByRole('button', { name: 'Menu' }).click();
      await w.page.getByRole('link', { name: 'FAQ' }).click();
      await w.page.getByRole('heading', { name: 'FAQ', level: 1 }).waitFor();
      await w.page.getByRole('button', { name: 'Menu' }).click();
      await expect.poll(() => privacy.isVisible()).toBe(true);
      await w.page.goBack();
      await w.page.getByRole('heading', { name: 'Login' }).waitFor();
      await expect.poll(() => privacy.isVisible()).toBe(false);
      // Open, then turned wide: the links are back in the header and the popover is gone.
      await w.page.getByRole('button', { name: 'Menu' }).click();
      await expect.poll(() => privacy.isVisible()).toBe(true);
      await w.page.setViewportSize(DESKTOP);
      await expect.poll(() => w.page.evaluate(() => document.getElementById('public-nav')!.matches(':popover-open'))).toBe(false);
      expect(await privacy.isVisible()).toBe(true);
      expect(w.errors).toEqual([]);
    } finally {
      await w.close();
    }
  });
});
