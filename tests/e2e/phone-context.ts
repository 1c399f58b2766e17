import type { BrowserContext, Page } from 'playwright-core';
import type { Stack } from './harness.ts';
import { USER_PASSWORD, uniqueName } from './fixtures.ts';
import { registerViaApi } from './flows.ts';

export const PHONE = { width: 390, height: 844 };

export interface Phone {
  context: BrowserContext;
  page: Page;
  errors: string[];
  warnings: string[];
  close(): Promise<void>;
}

/**
 * A touch phone (coarse pointer) signed in with `token`. `share` puts a recording stand-in for
 * the operating system's share sheet behind navigator.share (the one thing headless Chromium on
 * Linux does not have); 'none' removes the API so the copy fallback is what runs.
 */
export async function openPhone(stack: Stack, token: string | null, share: 'record' | 'none', viewport = PHONE, touch = true): Promise<Phone> {
  const context = await stack.browser.newContext({ viewport, hasTouch: touch, isMobile: touch });
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: stack.siteUrl });
  if (token) await context.addInitScript((t) => localStorage.getItem('token') ?? localStorage.setItem('token', t), token);
  await context.addInitScript((mode) => {
    const nav = Navigator.prototype as unknown as Record<string, unknown>;
    delete nav.share;
    delete nav.canShare;
    if (mode === 'record') {
      (window as unknown as { __shared: ShareData[] }).__shared = [];
      nav.share = async (data: ShareData) => void (window as unknown as { __shared: ShareData[] }).__shared.push(data);
      nav.canShare = () => true;
    }
  }, share);
  const page = await context.newPage();
  const errors: string[] = [];
  const warnings: string[] = [];
  page.on('console', (m) => (m.type() === 'error' ? errors : m.type() === 'warning' ? warnings : []).push(m.text()));
  page.on('pageerror', (e) => errors.push(e.message));
  return { context, page, errors, warnings, close: () => context.close() };
}

export async function newUser(stack: Stack, prefix: string): Promise<{ name: string; token: string }> {
  const name = uniqueName(prefix);
  await registerViaApi(stack, name, USER_PASSWORD);
  return { name, token: await stack.login(name, USER_PASSWORD) };
}

/** What a phone's notch and home bar take (Chromium's safe-area override; the page asks for viewport-fit=cover). */
export async function safeAreaInsets(page: Page, sides: { top?: number; right?: number; bottom?: number; left?: number }): Promise<void> {
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('Emulation.setSafeAreaInsetsOverride', { insets: { top: 0, right: 0, bottom: 0, left: 0, ...sides } });
}
