import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { ADMIN, screenshotPath, startStack, type Stack } from './harness.ts';
import { PNG_1X1, USER_PASSWORD, uniqueName } from './fixtures.ts';
import { uploadViaApi } from './flows.ts';
import { screenshot as fullPageShot } from './page-checks.ts';
import { photoPng } from './picture.ts';
import { PHONE, newUser, openPhone, safeAreaInsets } from './phone-context.ts';

/** Issue 11 items 6 and 8–11 in Chromium at 390 px, against the real server. */
let stack: Stack;
beforeAll(async () => {
  stack = await startStack();
});
afterAll(async () => {
  await stack?.stop();
});

async function screenshot(page: Page, name: string): Promise<void> {
  await page.evaluate(() => window.scrollTo(0, 0));
  await fullPageShot(page, name);
}

const shared = (page: Page) => page.evaluate(() => (window as unknown as { __shared: ShareData[] }).__shared);
const imageLoaded = (page: Page, selector: string) =>
  page.locator(selector).first().evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth > 0);

describe('after an upload on a phone (item 8)', () => {
  it('says "Choose photos & files", then offers Share beside Copy link, a thumbnail and Recent uploads', async () => {
    const { token } = await newUser(stack, 'sharer');
    const phone = await openPhone(stack, token, 'record');
    const { page } = phone;
    try {
      await page.goto(`${stack.siteUrl}/dashboard`);
      await page.getByRole('button', { name: 'Choose photos & files' }).waitFor();
      expect(await page.getByText(/drag and drop/i).count()).toBe(0);

      await page.getByLabel('Choose files to upload').setInputFiles({ name: 'sunset.png', mimeType: 'image/png', buffer: await photoPng() });
      const link = page.locator('.upload-list .upload-link');
      await link.waitFor({ timeout: 30_000 });
      const url = await link.getAttribute('href');
      expect(url).toMatch(new RegExp(`^${stack.filesUrl}/[^/]+\\.png$`));

      // The finished row shows the picture just picked, without downloading it again.
      const rowThumb = page.locator('.upload-list .file-thumb img');
      expect(await rowThumb.getAttribute('src')).toMatch(/^blob:/);
      await expect.poll(() => imageLoaded(page, '.upload-list .file-thumb img')).toBe(true);

      // Share hands the files-host link to the system share sheet.
      await page.locator('.upload-list').getByRole('button', { name: 'Share sunset.png' }).click();
      await expect.poll(() => shared(page)).toEqual([{ title: 'sunset.png', url }]);

      // Share keeps its size inside the row, also while the link beside it says it was copied
      // (it was squeezed to 47 px, then pushed 10 px out of the card by "Copied to clipboard").
      const share = async () => {
        const [button, row] = await Promise.all([
          page.locator('.upload-list').getByRole('button', { name: 'Share sunset.png' }).boundingBox(),
          page.locator('.upload-list .upload-item').first().boundingBox(),
        ]);
        return { wide: button!.width >= 60, inside: button!.x + button!.width <= row!.x + row!.width + 0.5 };
      };
      expect(await share()).toEqual({ wide: true, inside: true });
      await link.click();
      await page.locator('.upload-list').getByText('Copied to clipboard').waitFor();
      expect(await share()).toEqual({ wide: true, inside: true });

      // Recent uploads lists it with a thumbnail, Copy link and Share.
      const recent = page.getByRole('region', { name: 'Recent uploads' });
      await recent.getByText('sunset.png').waitFor();
      await expect.poll(() => imageLoaded(page, '.recent-list .file-thumb img')).toBe(true);
      await recent.getByRole('button', { name: 'Copy link' }).click();
      await recent.getByText('Copied to clipboard').waitFor();
      expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(url);
      await screenshot(page, 'phone-390-dashboard-after-upload-light');
      // What a phone shows (no full page): the landing page's picture of the app is taken from here
      // (public/landing/), after the checks. It shows a site as deployed: a files host's name in
      // place of the suite's loopback address and port, a person's name in place of the test's.
      await page.evaluate(() => {
        for (const a of document.querySelectorAll('.upload-link')) a.textContent = `https://files.stash.example/${a.textContent!.split('/').pop()}`;
        for (const el of document.querySelectorAll('.topbar-user')) el.textContent = 'maya';
      });
      await page.screenshot({ path: screenshotPath('landing-app-light').replace(/\.png$/, '.jpg'), type: 'jpeg', quality: 72 });
      await page.screenshot({ path: screenshotPath('readme-phone-upload') });
      await page.emulateMedia({ colorScheme: 'dark' });
      await screenshot(page, 'phone-390-dashboard-after-upload-dark');
      await page.evaluate(() => window.scrollTo(0, 0));
      await page.screenshot({ path: screenshotPath('landing-app-dark').replace(/\.png$/, '.jpg'), type: 'jpeg', quality: 72 });
      expect(phone.errors).toEqual([]);
    } finally {
      await phone.close();
    }
  });

  it('copies the link where the browser has no share sheet, and a desktop still says drag and drop', async () => {
    const { token } = await newUser(stack, 'copier');
    const { url } = await uploadViaApi(stack, token, 'notes.txt', Buffer.from('hello'), 'text/plain');
    const desktop = await openPhone(stack, token, 'none', { width: 1280, height: 800 }, false);
    const { page } = desktop;
    try {
      await page.goto(`${stack.siteUrl}/dashboard`);
      await page.getByText('Drag and drop files here, paste them, or').waitFor();
      await page.getByRole('button', { name: 'Choose files', exact: true }).waitFor();
      const recent = page.getByRole('region', { name: 'Recent uploads' });
      await recent.getByRole('button', { name: 'Share notes.txt' }).click();
      await recent.getByText('Copied to clipboard').waitFor();
      const copied = await page.evaluate(() => navigator.clipboard.readText());
      expect(copied.endsWith('/' + url.split('/').pop())).toBe(true);
      // A text file has no picture: the kind's icon stands in.
      expect(await recent.locator('.file-thumb-icon[data-kind="text"]').count()).toBe(1);
      expect(desktop.errors).toEqual([]);
    } finally {
      await desktop.close();
    }
  });
});

describe('thumbnails in the lists (item 9)', () => {
  it('never downloads an original file to show a list, and keeps a fixed box for every thumbnail', async () => {
    const { token } = await newUser(stack, 'thumbs');
    const photo = await uploadViaApi(stack, token, 'beach.png', await photoPng(), 'image/png');
    await uploadViaApi(stack, token, 'readme.txt', Buffer.from('text'), 'text/plain');
    const phone = await openPhone(stack, token, 'record');
    const { page } = phone;
    const fileRequests: string[] = [];
    page.on('request', (r) => r.url().startsWith(stack.filesUrl) && fileRequests.push(r.url()));
    try {
      // The server's File objects say whether previews exist (contract File.previews, helper media).
      const photoPreviews = async () => {
        const list = await stack.api<{ files: { actual_name: string; previews?: { url: string; width: number }[] }[] }>('/api/v1/files/uploaded', { token, page: 1, pageSize: 6 });
        return list.body.files.find((f) => photo.url.endsWith(`/${f.actual_name}`))?.previews;
      };
      const serverHasPreviews = Array.isArray(await photoPreviews());
      // They are made in the background after the upload, and the list shows what the server
      // listed when the page asked: wait for the server to list them (slow on a loaded machine).
      if (serverHasPreviews) await expect.poll(async () => (await photoPreviews())?.length ?? 0, { timeout: 60_000, interval: 200 }).toBeGreaterThan(0);
      await page.goto(`${stack.siteUrl}/uploaded`);
      await page.getByRole('heading', { name: 'beach.png' }).waitFor();
      const boxes = page.locator('.file-card .file-thumb');
      expect(await boxes.count()).toBe(2);
      for (const box of await boxes.all()) {
        const b = (await box.boundingBox())!;
        // Reserved before anything loads: 4:3 for a picture, a lower 5:2 band for an icon.
        expect([4 / 3, 5 / 2].some((r) => Math.abs(b.width / b.height - r) < 0.02)).toBe(true);
      }
      expect(await page.locator('.file-card [data-kind="text"].file-thumb-icon').count()).toBe(1);
      if (serverHasPreviews) {
        // Once made, the photo's previews are WebP renditions listed with srcset.
        const img = page.locator('.file-card [data-kind="image"] img');
        await expect.poll(async () => ((await img.count()) > 0 ? await img.getAttribute('srcset') : ''), { timeout: 10_000 }).toMatch(/ \d+w/);
      } else {
        expect(await page.locator('.file-card [data-kind="image"].file-thumb-icon').count()).toBe(1);
      }
      const original = `${stack.filesUrl}/${photo.url.split('/').pop()}`;
      expect(fileRequests).not.toContain(original);
      await page.emulateMedia({ colorScheme: 'dark' });
      await page.screenshot({ path: screenshotPath('readme-phone-files-dark') });
      // Play/View loads the original only when asked for (spec §2 preview by type).
      await page.getByRole('button', { name: 'View beach.png' }).click();
      await expect.poll(() => fileRequests).toContain(original);
      expect(phone.errors).toEqual([]);
    } finally {
      await phone.close();
    }
  });
});

describe('SPA basics (item 10)', () => {
  it('names each screen, starts it at the top with focus on its heading, and pages scroll to the top', async () => {
    const { token } = await newUser(stack, 'navigator');
    for (let i = 0; i < 8; i += 1) await uploadViaApi(stack, token, `file-${i}.png`, PNG_1X1, 'image/png');
    const phone = await openPhone(stack, token, 'record', { width: 390, height: 600 });
    const { page } = phone;
    try {
      await page.goto(`${stack.siteUrl}/dashboard`);
      await page.getByRole('heading', { name: 'File Uploader' }).waitFor();
      await expect.poll(() => page.title()).toBe('File Uploader · Stash');
      await page.getByRole('region', { name: 'Recent uploads' }).waitFor();
      await page.evaluate(() => window.scrollTo(0, document.body.scrollHeight));
      await expect.poll(() => page.evaluate(() => window.scrollY)).toBeGreaterThan(0);

      await page.getByRole('navigation', { name: 'Quick navigation' }).getByRole('link', { name: 'Files' }).click();
      await page.waitForURL('**/uploaded');
      await expect.poll(() => page.title()).toBe('Uploaded Files · Stash');
      await expect.poll(() => page.evaluate(() => document.activeElement?.textContent)).toBe('Uploaded Files');
      expect(await page.evaluate(() => window.scrollY)).toBe(0);

      // Paging: page 2 starts at the top too.
      await page.getByRole('button', { name: 'Page 2' }).scrollIntoViewIfNeeded();
      expect(await page.evaluate(() => window.scrollY)).toBeGreaterThan(0);
      await page.getByRole('button', { name: 'Page 2' }).click();
      await expect.poll(() => page.evaluate(() => window.scrollY)).toBe(0);
      await expect.poll(() => page.getByRole('button', { name: 'Page 2' }).getAttribute('aria-current')).toBe('page');
      expect(phone.errors).toEqual([]);
    } finally {
      await phone.close();
    }
  });

  it('answers a path that is no route with 404 and the Page Not Found screen, and serves robots.txt', async () => {
    const phone = await openPhone(stack, null, 'none');
    try {
      const res = await phone.page.goto(`${stack.siteUrl}/no-such-page`);
      expect(res?.status()).toBe(404);
      await phone.page.getByRole('heading', { name: 'Page Not Found' }).waitFor();
      await expect.poll(() => phone.page.title()).toBe('Page Not Found · Stash');
      // Issue 11 item 12: the browser's bar follows light and dark mode.
      const themes = await phone.page.$$eval('meta[name="theme-color"]', (ms) => ms.map((m) => [m.getAttribute('media'), m.getAttribute('content')]));
      expect(themes).toEqual([
        ['(prefers-color-scheme: light)', '#ffffff'],
        ['(prefers-color-scheme: dark)', '#141a2e'],
      ]);
      expect((await fetch(`${stack.siteUrl}/login`)).status).toBe(200);
      const robots = await fetch(`${stack.siteUrl}/robots.txt`);
      expect(robots.status).toBe(200);
      expect(await robots.text()).toMatch(/^User-agent: \*/m);
    } finally {
      await phone.close();
    }
  });
});

describe('an admin on a phone (item 11)', () => {
  it('shares a new invite whose link fills in /register, confirms role changes, and keeps user rows and filters compact', async () => {
    const adminToken = await stack.login(ADMIN.username, ADMIN.password);
    const phone = await openPhone(stack, adminToken, 'record');
    const { page } = phone;
    try {
      await page.goto(`${stack.siteUrl}/admin/invitelogs`);
      // Filters fold away on a phone.
      await page.getByRole('heading', { name: 'Invite Logs' }).waitFor();
      expect(await page.getByRole('searchbox', { name: 'Invite key' }).isVisible()).toBe(false);
      await page.getByRole('button', { name: 'Create' }).click();
      const keys = page.getByRole('list', { name: 'New invite keys' });
      const key = (await keys.locator('code').first().textContent())!;
      await keys.getByRole('button', { name: 'Copy' }).click();
      expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(key);
      await keys.getByRole('button', { name: `Share invite ${key}` }).click();
      const inviteUrl = `${stack.siteUrl}/register?invite=${key}`;
      await expect.poll(async () => (await shared(page)).map((s) => s.url)).toEqual([inviteUrl]);
      await screenshot(page, 'phone-390-admin-new-invite-light');

      // The link opens /register with the code filled in, and it registers for real.
      const guest = await openPhone(stack, null, 'none');
      const name = uniqueName('invited');
      try {
        await guest.page.goto(inviteUrl);
        expect(await guest.page.getByLabel('Invite code', { exact: true }).inputValue()).toBe(key);
        await guest.page.getByLabel('Username', { exact: true }).fill(name);
        await guest.page.getByLabel('Password', { exact: true }).fill(USER_PASSWORD);
        await guest.page.getByLabel('Confirm password', { exact: true }).fill(USER_PASSWORD);
        await guest.page.getByRole('checkbox').check();
        await guest.page.locator('form button[type="submit"]').click();
        await guest.page.getByText('Success: Account has been created! Redirecting...').waitFor();
      } finally {
        await guest.close();
      }

      // Users: compact rows, actions in a sheet, role changes confirmed.
      await page.goto(`${stack.siteUrl}/admin/users`);
      await page.getByRole('button', { name: 'Filters' }).click();
      await page.getByRole('searchbox', { name: 'Search' }).fill(name);
      const role = page.getByRole('combobox', { name: `Role of ${name}` });
      await role.waitFor();
      expect(await page.getByRole('button', { name: `Ban ${name}` }).isVisible()).toBe(false);
      await page.getByRole('button', { name: `Actions for ${name}` }).click();
      const sheet = page.getByRole('dialog', { name });
      for (const label of ['Ban', 'Rename', 'Reset password', 'Delete']) await sheet.getByRole('button', { name: label, exact: true }).waitFor();
      await screenshot(page, 'phone-390-admin-user-sheet-light');
      await page.screenshot({ path: screenshotPath('readme-phone-admin-sheet') });
      await sheet.getByRole('button', { name: 'Cancel' }).click();

      const roleOf = async () => (await stack.api<{ user?: { role: string } }>('/api/v1/auth/data', { token: await stack.login(name, USER_PASSWORD) })).body.user?.role;
      await role.selectOption('trusted');
      await page.getByRole('alertdialog').getByRole('button', { name: 'Cancel' }).click();
      expect(await roleOf()).toBe('default');
      await expect.poll(() => role.inputValue()).toBe('default');
      await role.selectOption('trusted');
      await page.getByRole('alertdialog').getByRole('button', { name: 'Make trusted' }).click();
      await expect.poll(roleOf).toBe('trusted');
      expect(phone.errors).toEqual([]);
    } finally {
      await phone.close();
    }
  });

  it('sorts All files the way the user list does', async () => {
    const { name, token } = await newUser(stack, 'sorter');
    await uploadViaApi(stack, token, 'small.png', PNG_1X1, 'image/png');
    await uploadViaApi(stack, token, 'large.png', await photoPng(200, 150), 'image/png');
    await uploadViaApi(stack, token, 'middle.txt', Buffer.alloc(300, 65), 'text/plain');
    const phone = await openPhone(stack, await stack.login(ADMIN.username, ADMIN.password), 'record');
    const { page } = phone;
    try {
      await page.goto(`${stack.siteUrl}/admin/uploaded`);
      await page.getByRole('button', { name: 'Filters' }).click();
      await page.getByRole('searchbox', { name: 'Username' }).fill(name);
      const names = () => page.locator('.rtable tbody tr td[data-label="File"] a').allTextContents();
      // Three uploads within one second tie on newest, so only the size orders are exact.
      await expect.poll(async () => (await names()).length).toBe(3);
      await page.getByRole('combobox', { name: 'Sort' }).selectOption('largest');
      await expect.poll(names).toEqual(['large.png', 'middle.txt', 'small.png']);
      await page.getByRole('combobox', { name: 'Sort' }).selectOption('smallest');
      await expect.poll(names).toEqual(['small.png', 'middle.txt', 'large.png']);
      expect(await page.locator('.rtable .file-thumb').count()).toBe(3);
      await screenshot(page, 'phone-390-admin-all-files-light');
      expect(phone.errors).toEqual([]);
    } finally {
      await phone.close();
    }
  });
});

describe('navigation made for a thumb (item 6)', () => {
  it('puts Upload, Files and Settings at the bottom (plus Admin for mods and admins) instead of the sidebar', async () => {
    const { token } = await newUser(stack, 'thumb');
    const phone = await openPhone(stack, token, 'none');
    try {
      await phone.page.goto(`${stack.siteUrl}/settings`);
      const bar = phone.page.getByRole('navigation', { name: 'Quick navigation' });
      await bar.waitFor();
      expect(await bar.getByRole('link').allTextContents()).toEqual(['Upload', 'Files', 'Settings']);
      const box = (await bar.boundingBox())!;
      expect(Math.round(box.y + box.height)).toBe(PHONE.height);
      expect(await phone.page.locator('nav#sidebar').isVisible()).toBe(false);
      expect(await bar.getByRole('link', { name: 'Settings' }).getAttribute('aria-current')).toBe('page');
      // Invites Given is one tap away from Settings.
      await phone.page.getByRole('navigation', { name: 'Account screens' }).getByRole('link', { name: 'Invites Given' }).click();
      await phone.page.waitForURL('**/invites');
      expect(await bar.getByRole('link', { name: 'Settings' }).getAttribute('aria-current')).toBe('page');
    } finally {
      await phone.close();
    }
    const admin = await openPhone(stack, await stack.login(ADMIN.username, ADMIN.password), 'none');
    try {
      await admin.page.goto(`${stack.siteUrl}/dashboard`);
      const bar = admin.page.getByRole('navigation', { name: 'Quick navigation' });
      await bar.waitFor();
      expect(await bar.getByRole('link').allTextContents()).toEqual(['Upload', 'Files', 'Settings', 'Admin']);
    } finally {
      await admin.close();
    }
  });
});

describe('a phone with a notch, and fingers instead of a mouse', () => {

  const box = async (page: Page, selector: string) => (await page.locator(selector).first().boundingBox())!;

  it('keeps the top bars clear of the notch, upright and in landscape', async () => {
    const { token } = await newUser(stack, 'notch');
    const phone = await openPhone(stack, token, 'none');
    const visitor = await openPhone(stack, null, 'none');
    const { page } = phone;
    try {
      await page.goto(`${stack.siteUrl}/dashboard`);
      await page.getByRole('link', { name: 'Logout' }).waitFor();
      await safeAreaInsets(page, { top: 47, bottom: 34 });
      // The phone rule's padding cancelled the inset: the brand and Logout sat under the status bar.
      await expect.poll(async () => (await box(page, '.topbar .brand')).y).toBeGreaterThanOrEqual(47);
      expect((await page.getByRole('link', { name: 'Logout' }).boundingBox())!.y).toBeGreaterThanOrEqual(47);

      await page.setViewportSize({ width: 844, height: 390 });
      await safeAreaInsets(page, { left: 47, right: 47, bottom: 21 });
      await expect.poll(async () => (await box(page, '.topbar .brand')).x).toBeGreaterThanOrEqual(47);
      const logout = (await page.getByRole('link', { name: 'Logout' }).boundingBox())!;
      expect(logout.x + logout.width).toBeLessThanOrEqual(844 - 47);
      expect((await box(page, '.sidebar a')).x).toBeGreaterThanOrEqual(47);

      // The public pages' header had no inset at all.
      await visitor.page.goto(`${stack.siteUrl}/`);
      await visitor.page.locator('.public-header .brand').waitFor();
      await safeAreaInsets(visitor.page, { top: 47 });
      await expect.poll(async () => (await box(visitor.page, '.public-header .brand')).y).toBeGreaterThanOrEqual(47);
      // The folded menu opens under the header, not over it.
      await visitor.page.getByRole('button', { name: /menu/i }).click();
      const header = await box(visitor.page, '.public-header');
      expect((await box(visitor.page, '.public-nav')).y).toBeGreaterThanOrEqual(header.y + header.height - 1);
      expect([...phone.errors, ...visitor.errors]).toEqual([]);
    } finally {
      await phone.close();
      await visitor.close();
    }
  });

  it('shows no hover look on a control after a tap: a touch screen has no hover', async () => {
    const { token } = await newUser(stack, 'thumb');
    const phone = await openPhone(stack, token, 'none');
    const { page } = phone;
    try {
      await page.goto(`${stack.siteUrl}/uploaded`);
      const toggle = page.locator('.filter-fold-toggle');
      await toggle.waitFor();
      const background = () => toggle.evaluate((el) => getComputedStyle(el).backgroundColor);
      const untouched = await background();
      await toggle.tap();
      await expect.poll(() => toggle.getAttribute('aria-expanded')).toBe('true');
      // The last control tapped stayed grey (:hover sticks on touch screens).
      // (Polled: the pressed look, :active, lasts a moment after the finger lifts.)
      await expect.poll(background).toBe(untouched);
      expect(phone.errors).toEqual([]);
    } finally {
      await phone.close();
    }
  });
});
