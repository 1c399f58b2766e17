import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN, startStack, type Stack } from './harness.ts';
import { PNG_1X1, USER_PASSWORD, uniqueName } from './fixtures.ts';
import { loginViaUi, registerViaApi, registerViaUi, uploadViaApi } from './flows.ts';
import { screenshot } from './page-checks.ts';

let stack: Stack;
beforeAll(async () => {
  stack = await startStack();
});
afterAll(async () => {
  await stack?.stop();
});

describe('the admin screens against the real server', () => {
  it('creates an invite that a newcomer claims, promotes them to mod, and the mod manages all files only', async () => {
    const admin = await stack.openPage({ width: 1280 });
    const newcomer = await stack.openPage({ width: 390, height: 844 });
    const name = uniqueName('newcomer');
    try {
      await loginViaUi(admin.page, stack, ADMIN.username, ADMIN.password);

      // Create one invite key in Invite Logs and read it off the screen.
      await admin.page.goto(`${stack.siteUrl}/admin/invitelogs`);
      await admin.page.getByLabel('Number of invite keys').fill('1');
      await admin.page.getByRole('button', { name: 'Create' }).click();
      const key = (await admin.page.getByRole('list', { name: 'New invite keys' }).locator('code').first().textContent())?.trim();
      // The new keys' boxes line up under their heading (a leftover list indent pushed them 24 px in).
      const [heading, box] = await Promise.all([
        admin.page.getByRole('heading', { name: 'New invite keys' }).boundingBox(),
        admin.page.getByRole('list', { name: 'New invite keys' }).getByRole('listitem').first().boundingBox(),
      ]);
      expect(Math.round(box!.x)).toBe(Math.round(heading!.x));
      expect(key).toBeTruthy();

      await registerViaUi(newcomer.page, stack, name, USER_PASSWORD, key!);

      // The log shows the key as claimed by the newcomer (filtered by the claimed-by box).
      await admin.page.reload();
      await admin.page.getByRole('searchbox', { name: 'Claimed by' }).fill(name);
      const row = admin.page.getByRole('row').filter({ hasText: key! });
      await row.getByText('Claimed', { exact: true }).waitFor();
      await screenshot(admin.page, 'admin-1280-invitelogs-claimed');

      // Promote the newcomer to mod with the role dropdown (admin is not offered).
      await admin.page.goto(`${stack.siteUrl}/admin/users`);
      await admin.page.getByRole('searchbox', { name: 'Search' }).fill(name);
      const roleSelect = admin.page.getByRole('combobox', { name: `Role of ${name}` });
      // The list re-renders once the search applies: wait for the newcomer's row (allTextContents does not).
      await roleSelect.waitFor();
      expect(await roleSelect.locator('option').allTextContents()).toEqual(['default', 'trusted', 'mod']);
      await roleSelect.selectOption('mod');
      // Issue 11 item 11: a role change is confirmed first.
      await admin.page.getByRole('alertdialog').getByRole('button', { name: 'Make mod' }).click();
      await expect.poll(async () => {
        const res = await stack.api<{ user?: { role: string } }>('/api/v1/auth/data', { token: await stack.login(name, USER_PASSWORD) });
        return res.body.user?.role;
      }).toBe('mod');

      // Someone else's file, for the mod to remove.
      const owner = uniqueName('owner');
      await registerViaApi(stack, owner, USER_PASSWORD);
      const ownerToken = await stack.login(owner, USER_PASSWORD);
      const { url } = await uploadViaApi(stack, ownerToken, 'owned-by-someone-else.png', PNG_1X1, 'image/png');

      // The mod: All files is the only admin link; the admin-only pages send them to /dashboard.
      await loginViaUi(newcomer.page, stack, name, USER_PASSWORD);
      // At 390 px the sidebar gives way to the bottom bar, so look at its links, not what is painted.
      const sidebar = newcomer.page.locator('nav#sidebar');
      await expect.poll(() => sidebar.locator('a[href="/admin/uploaded"]').count()).toBe(1);
      for (const adminOnly of ['/admin/users', '/admin/settings', '/admin/invitelogs']) {
        expect(await sidebar.locator(`a[href="${adminOnly}"]`).count()).toBe(0);
      }
      await newcomer.page.goto(`${stack.siteUrl}/admin/users`);
      await newcomer.page.waitForURL('**/dashboard');

      await newcomer.page.goto(`${stack.siteUrl}/admin/uploaded`);
      // At 390 px the filters are folded away behind one button (issue 11 item 11).
      await newcomer.page.getByRole('button', { name: 'Filters' }).click();
      await newcomer.page.getByRole('searchbox', { name: 'Username' }).fill(owner);
      await newcomer.page.getByRole('button', { name: 'Delete owned-by-someone-else.png' }).click();
      await newcomer.page.getByRole('alertdialog').getByRole('button', { name: 'Delete' }).click();
      await newcomer.page.getByText('No files match these filters.').waitFor();
      await screenshot(newcomer.page, 'admin-390-mod-all-files-after-delete');
      expect((await fetch(url)).status).toBe(404);

      admin.assertNoConsoleErrors();
      newcomer.assertNoConsoleErrors();
    } finally {
      await admin.close();
      await newcomer.close();
    }
  });

  it('fits the users table beside the sidebar of a phone in landscape, with one set of actions at every width', async () => {
    const name = uniqueName('wide');
    await registerViaApi(stack, name, USER_PASSWORD);
    const admin = await stack.openPage({ width: 844, height: 390 });
    try {
      await loginViaUi(admin.page, stack, ADMIN.username, ADMIN.password);
      await admin.page.goto(`${stack.siteUrl}/admin/users`);
      await admin.page.getByRole('searchbox', { name: 'Search' }).fill(name);
      const cell = admin.page.locator('td[data-label="Username"]').filter({ hasText: name });
      await cell.waitFor();
      const actions = admin.page.getByRole('button', { name: `Actions for ${name}` });
      const ban = admin.page.getByRole('button', { name: `Ban ${name}`, exact: true });
      // Eight columns in the ~590 px beside the sidebar broke every word letter by letter (the
      // name's cell was ~50 px): where the table's box is narrow its rows are cards.
      expect((await cell.boundingBox())!.width).toBeGreaterThan(150);
      expect([await actions.isVisible(), await ban.isVisible()]).toEqual([false, true]);
      await screenshot(admin.page, 'admin-844-users-landscape');
      // A desktop showed the phone's Actions button beside the inline buttons; a phone shows only it.
      await admin.page.setViewportSize({ width: 1280, height: 800 });
      await expect.poll(async () => [await actions.isVisible(), await ban.isVisible()]).toEqual([false, true]);
      await admin.page.setViewportSize({ width: 390, height: 844 });
      await expect.poll(async () => [await actions.isVisible(), await ban.isVisible()]).toEqual([true, false]);
      expect(admin.errors).toEqual([]);
    } finally {
      await admin.close();
    }
  });

  it('turns maintenance mode on and off from Site Settings, and a user feels it', async () => {
    const admin = await stack.openPage({ width: 1280 });
    try {
      const user = uniqueName('plain');
      await registerViaApi(stack, user, USER_PASSWORD);
      const token = await stack.login(user, USER_PASSWORD);

      await loginViaUi(admin.page, stack, ADMIN.username, ADMIN.password);
      await admin.page.goto(`${stack.siteUrl}/admin/settings`);
      const maintenance = admin.page.getByRole('switch', { name: /Maintenance mode/ });
      await expect.poll(() => maintenance.isEnabled()).toBe(true);
      expect(await maintenance.isChecked()).toBe(false);
      // One stray tap locked everyone out: turning it on asks first, and Cancel changes nothing.
      await maintenance.click();
      const ask = admin.page.getByRole('alertdialog', { name: /Turn on maintenance mode\? Everyone but admins will be locked out/ });
      await ask.waitFor();
      // The box does not tick while the question is open, nor after a "no".
      expect(await maintenance.isChecked()).toBe(false);
      await ask.getByRole('button', { name: 'Cancel' }).click();
      await ask.waitFor({ state: 'detached' });
      expect(await maintenance.isChecked()).toBe(false);
      expect((await stack.api('/api/v1/utils/userstats', { token })).status).toBe(200);
      await maintenance.click();
      await ask.getByRole('button', { name: 'Turn on' }).click();
      await expect.poll(async () => (await maintenance.isChecked()) && (await maintenance.isEnabled())).toBe(true);
      // Design §6: under maintenance every other call from a non-admin gets 503.
      expect((await stack.api('/api/v1/utils/userstats', { token })).status).toBe(503);
      await screenshot(admin.page, 'admin-1280-settings-maintenance-on');

      // Turning it off lets people back in: nothing to ask.
      await maintenance.click();
      await expect.poll(async () => (await maintenance.isChecked()) === false && (await maintenance.isEnabled())).toBe(true);
      expect(await admin.page.getByRole('alertdialog').count()).toBe(0);
      expect((await stack.api('/api/v1/utils/userstats', { token })).status).toBe(200);

      // A default user who types an admin address lands on /dashboard.
      const plain = await stack.openPage({ width: 390, height: 844 });
      try {
        await loginViaUi(plain.page, stack, user, USER_PASSWORD);
        await plain.page.goto(`${stack.siteUrl}/admin/uploaded`);
        await plain.page.waitForURL('**/dashboard');
        plain.assertNoConsoleErrors();
      } finally {
        await plain.close();
      }
      admin.assertNoConsoleErrors();
    } finally {
      await admin.close();
    }
  });
});
