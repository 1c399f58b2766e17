import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN, startStack, type Stack } from './harness.ts';
import { USER_PASSWORD, uniqueName } from './fixtures.ts';
import { loginViaUi, registerViaApi } from './flows.ts';
import { screenshot } from './page-checks.ts';

let stack: Stack;
beforeAll(async () => {
  stack = await startStack();
});
afterAll(async () => {
  await stack?.stop();
});

describe('an admin bans a user', () => {
  it("throws the banned user's open session out to /login", async () => {
    const username = uniqueName('banned');
    await registerViaApi(stack, username, USER_PASSWORD);

    const victim = await stack.openPage({ width: 390, height: 844 });
    const admin = await stack.openPage({ width: 1280 });
    try {
      await loginViaUi(victim.page, stack, username, USER_PASSWORD);
      await victim.page.goto(`${stack.siteUrl}/uploaded`);
      await victim.page.waitForURL('**/uploaded');

      await loginViaUi(admin.page, stack, ADMIN.username, ADMIN.password);
      await admin.page.goto(`${stack.siteUrl}/admin/users`);
      await admin.page.getByRole('searchbox', { name: 'Search' }).fill(username);
      await admin.page.getByRole('button', { name: `Ban ${username}` }).click();
      const dialog = admin.page.getByRole('alertdialog');
      // Spec §4: the confirm text says ban.
      expect(await dialog.textContent()).toContain(`ban ${username}`);
      await dialog.getByRole('button', { name: 'Ban' }).click();
      await admin.page.getByRole('button', { name: `Unban ${username}` }).waitFor();
      await screenshot(admin.page, 'ban-1280-admin-users-after-ban');

      // The victim's next navigation checks the session (spec §4) and lands on /login.
      await victim.page.goto(`${stack.siteUrl}/dashboard`);
      await victim.page.waitForURL('**/login', { timeout: 15_000 });
      expect(await victim.page.evaluate(() => localStorage.getItem('token'))).toBeNull();
      await screenshot(victim.page, 'ban-390-victim-thrown-out');

      // And the account cannot sign in again while banned.
      const retry = await stack.api('/api/v1/auth/login', { username, password: USER_PASSWORD });
      expect(retry.status).toBeGreaterThanOrEqual(400);

      admin.assertNoConsoleErrors();
      // The refused session check is a 401/403 the browser itself logs; nothing else may appear.
      victim.assertNoConsoleErrors([/status of 40[13]/]);
    } finally {
      await victim.close();
      await admin.close();
    }
  });
});
