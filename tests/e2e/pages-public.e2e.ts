import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack, type Stack } from './harness.ts';
import { DESKTOP, PHONE, checkPage } from './page-checks.ts';

/**
 * Every public page on a phone and a desktop (tests/e2e/README.md), one test per page and width:
 * each page's checks (two axe runs, two screenshots) take a few seconds alone and up to 15 s on a
 * loaded machine. The signed-in pages are pages-signed-in.e2e.ts, a file of its own so the two
 * run side by side (vitest.e2e.config.ts runs two files at a time).
 */
const PUBLIC_PAGES = ['/', '/privacy', '/tos', '/faq', '/login', '/register', '/no-such-page'];

let stack: Stack;

beforeAll(async () => {
  stack = await startStack();
});
afterAll(async () => {
  await stack?.stop();
});

describe('every public page on a phone and a desktop: no sideways scroll, no console errors, no serious axe findings', () => {
  for (const viewport of [PHONE, DESKTOP]) {
    for (const route of PUBLIC_PAGES) {
      it(`${route} at ${viewport.width} px`, async () => {
        expect(await checkPage(stack, route, viewport, null)).toEqual([]);
      });
    }
  }
});
