import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack, type Stack } from './harness.ts';
import { PNG_1X1, USER_PASSWORD, uniqueName } from './fixtures.ts';
import { loginViaUi, registerViaUi } from './flows.ts';
import { screenshot } from './page-checks.ts';

let stack: Stack;
beforeAll(async () => {
  stack = await startStack();
});
afterAll(async () => {
  await stack?.stop();
});

describe('a user, from an invite to an API key', () => {
  it('registers with an invite, logs in, uploads a file, copies its link, deletes it, and gets a working ShareX config', async () => {
    const w = await stack.openPage({ width: 1280 });
    const { page } = w;
    const username = uniqueName('journey');
    try {
      await registerViaUi(page, stack, username, USER_PASSWORD, stack.inviteKey);
      // Spec §4: registration claimed the invite, so a second use is refused.
      const again = await stack.api('/api/v1/auth/register', { username: uniqueName('again'), password: USER_PASSWORD, invitekey: stack.inviteKey });
      expect(again.status).toBe(400);

      await loginViaUi(page, stack, username, USER_PASSWORD);
      await screenshot(page, 'journey-1280-dashboard');

      // Upload through the dashboard's file picker (spec §2).
      await page.getByLabel('Choose files to upload').setInputFiles({ name: 'holiday.png', mimeType: 'image/png', buffer: PNG_1X1 });
      const link = page.locator('.upload-link');
      await link.waitFor({ timeout: 30_000 });
      const uploadedUrl = await link.getAttribute('href');
      expect(uploadedUrl).toMatch(new RegExp(`^${stack.filesUrl}/[^/]+\\.png$`));
      await screenshot(page, 'journey-1280-uploaded-on-dashboard');

      // The file is listed in /uploaded.
      await page.goto(`${stack.siteUrl}/uploaded`);
      await page.getByRole('heading', { name: 'holiday.png' }).waitFor();
      await screenshot(page, 'journey-1280-uploaded-list');

      // Copy its link: the clipboard holds the files-host link, which serves the same bytes.
      await page.getByRole('button', { name: 'Copy link' }).first().click();
      await page.getByText('Copied to clipboard').first().waitFor();
      const copied = await page.evaluate(() => navigator.clipboard.readText());
      expect(copied).toBe(uploadedUrl);
      const served = await fetch(copied);
      expect(served.status).toBe(200);
      expect(Buffer.from(await served.arrayBuffer()).equals(PNG_1X1)).toBe(true);

      // Delete it, after the confirmation.
      await page.getByRole('button', { name: 'Delete holiday.png' }).click();
      const dialog = page.getByRole('alertdialog');
      await dialog.getByRole('button', { name: 'Delete' }).click();
      await page.getByRole('heading', { name: 'holiday.png' }).waitFor({ state: 'detached' });
      expect((await fetch(copied)).status).toBe(404);

      // API key and its ShareX configuration (spec §1, §5).
      await page.goto(`${stack.siteUrl}/settings`);
      await page.getByRole('button', { name: 'Download ShareX config' }).click();
      await page.getByText('Please generate an API key first.').first().waitFor();
      await page.getByRole('button', { name: 'Generate API key' }).click();
      await page.getByRole('button', { name: 'Copy key' }).first().waitFor();
      await screenshot(page, 'journey-1280-settings-api-key');
      const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Download ShareX config' }).click()]);
      expect(download.suggestedFilename()).toMatch(/\.sxcu$/);
      const config = JSON.parse(fs.readFileSync(await download.path(), 'utf8')) as {
        RequestURL: string;
        Headers: Record<string, string>;
        FileFormName: string;
        URL: string;
        ErrorMessage: string;
      };
      expect(config.RequestURL).toBe(`${stack.apiUrl}/api/v1/files/upload`);
      expect(config.FileFormName).toBe('file');
      expect(config.URL).toBe('{json:url}');
      expect(config.ErrorMessage).toBe('{json:error}');

      // Do what ShareX would do with it: the upload succeeds and the link serves the file.
      const form = new FormData();
      form.append(config.FileFormName, new Blob([new Uint8Array(PNG_1X1)], { type: 'image/png' }), 'from-sharex.png');
      const res = await fetch(config.RequestURL, { method: 'POST', headers: config.Headers, body: form });
      const answer = (await res.json()) as { url?: string; error?: string };
      expect(res.status, JSON.stringify(answer)).toBe(200);
      expect(answer.url).toMatch(new RegExp(`^${stack.filesUrl}/`));
      expect((await fetch(answer.url!)).status).toBe(200);

      w.assertNoConsoleErrors();
    } finally {
      await w.close();
    }
  });
});
