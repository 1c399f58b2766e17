import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN, startStack, type Stack } from './harness.ts';
import { PNG_1X1, USER_PASSWORD, uniqueName } from './fixtures.ts';
import { registerViaApi, uploadViaApi } from './flows.ts';
import { DESKTOP, PHONE, PHONE_360, checkPage } from './page-checks.ts';

/**
 * Every signed-in and admin page at 360, 390 and 1280 px (tests/e2e/README.md), one test per page
 * and width (see pages-public.e2e.ts). Issue 4 names 360 px for the signed-in area: the admin
 * tables must fold into cards there.
 */
// The admin sees every signed-in screen (design §6), so one account covers them all.
const SIGNED_IN_PAGES = ['/dashboard', '/uploaded', '/settings', '/invites', '/admin/settings', '/admin/users', '/admin/uploaded', '/admin/invitelogs'];

let stack: Stack;
let adminToken: string;

beforeAll(async () => {
  stack = await startStack();
  adminToken = await stack.login(ADMIN.username, ADMIN.password);
  // Rows in every table, so the stacked-card layout and long values are really exercised.
  for (let i = 0; i < 3; i += 1) await registerViaApi(stack, uniqueName('someone-with-a-long-name'), USER_PASSWORD);
  await stack.api('/api/v1/admin/create/invites', { token: adminToken, count: 3 });
  await stack.api('/api/v1/utils/invites', { token: adminToken });
  await uploadViaApi(stack, adminToken, 'a-rather-long-file-name-for-layout-testing-purposes.png', PNG_1X1, 'image/png');
});
afterAll(async () => {
  await stack?.stop();
});

describe('every signed-in page on phones and a desktop: no sideways scroll, no console errors, no serious axe findings', () => {
  for (const viewport of [PHONE_360, PHONE, DESKTOP]) {
    for (const route of SIGNED_IN_PAGES) {
      it(`${route} at ${viewport.width} px`, async () => {
        expect(await checkPage(stack, route, viewport, adminToken)).toEqual([]);
      });
    }
  }
});
