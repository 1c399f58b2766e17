import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BrowserContext, Locator, Page } from 'playwright-core';
import { screenshotPath, startStack, type Stack } from './harness.ts';
import { USER_PASSWORD, uniqueName } from './fixtures.ts';
import { loginViaUi, registerViaApi } from './flows.ts';
import { CountingProxy } from './counting-proxy.ts';
import { fireBackgroundSync, waitForServiceWorker } from './service-worker.ts';
import { UPLOAD_DB_NAME } from '../../src/upload/store/schema.ts';

/**
 * Issue 11 items 1–5 in real Chromium at 390 px, against the real server: the upload queue
 * never leaks one user's uploads to the next, says what it is doing during the local copy,
 * lets small files pass big ones, cancels at once with undo, and says when it is offline.
 */

const MiB = 1024 * 1024;
const WIDTH = 390;

let stack: Stack;
const tmpDir = fs.mkdtempSync(path.join(os.tmpdir(), 'stash-queue-'));

beforeAll(async () => {
  stack = await startStack();
});
afterAll(async () => {
  await stack?.stop();
  fs.rmSync(tmpDir, { recursive: true, force: true });
});

async function newUser(prefix: string): Promise<{ username: string; token: () => Promise<string> }> {
  const username = uniqueName(prefix);
  await registerViaApi(stack, username, USER_PASSWORD);
  return { username, token: () => stack.login(username, USER_PASSWORD) };
}

/** A browser context (its own storage) whose every request goes through a counting proxy. */
async function openPhone(): Promise<{ context: BrowserContext; page: Page; proxy: CountingProxy; errors: string[] }> {
  const proxy = new CountingProxy();
  // Nothing here cuts a request: status answers need not wait for other files' uploads.
  proxy.settleBeforeStatus = false;
  const proxyUrl = await proxy.listen();
  const context = await stack.browser.newContext({ viewport: { width: WIDTH, height: 800 }, proxy: { server: proxyUrl, bypass: '<-loopback>' } });
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('pageerror', (err) => errors.push(`uncaught: ${err.message}`));
  return { context, page, proxy, errors };
}

function writeFile(name: string, size: number): { filePath: string; sha256: string } {
  const filePath = path.join(tmpDir, name);
  const block = crypto.randomBytes(Math.min(size, MiB));
  const hash = crypto.createHash('sha256');
  const fd = fs.openSync(filePath, 'w');
  for (let written = 0, i = 0; written < size; i++) {
    const part = block.subarray(0, Math.min(block.length, size - written));
    if (part.length >= 4) part.writeUInt32BE(i, 0); // no two MiB alike
    fs.writeSync(fd, part);
    hash.update(part);
    written += part.length;
  }
  fs.closeSync(fd);
  return { filePath, sha256: hash.digest('hex') };
}

async function filesOf(token: string): Promise<{ original_name: string; url: string }[]> {
  const res = await stack.api<{ files?: { original_name: string; url: string }[] }>('/api/v1/files/uploaded', { token, page: 1, pageSize: 100 });
  return res.body.files ?? [];
}

async function waitForFileOf(token: string, name: string, timeoutMs = 60_000): Promise<{ url: string }> {
  let found: { url: string } | undefined;
  await expect.poll(async () => (found = (await filesOf(token)).find((f) => f.original_name === name)), { timeout: timeoutMs, interval: 250 }).toBeTruthy();
  return found!;
}

async function sha256OfUrl(url: string): Promise<string> {
  const res = await fetch(url);
  return crypto.createHash('sha256').update(Buffer.from(await res.arrayBuffer())).digest('hex');
}

/** The upload row of a file on the dashboard. */
const row = (page: Page, name: string): Locator => page.locator('li.upload-item', { hasText: name });

/**
 * Waits for a row to say `text`; when it never does, the error carries what the row said
 * instead, so a failure in CI names the state the upload was stuck in.
 */
async function waitForRowText(page: Page, name: string, text: string, timeout = 15_000): Promise<void> {
  await row(page, name)
    .getByText(text)
    .waitFor({ timeout })
    .catch(async (error: Error) => {
      const shown = await row(page, name).textContent({ timeout: 1000 }).catch(() => 'no row');
      const online = await page.evaluate(() => navigator.onLine).catch(() => '?');
      throw new Error(`${error.message}; the row says "${shown}"; navigator.onLine is ${online}`);
    });
}

/**
 * Holds the upload store's chunks from the page in a transaction kept busy until the page goes
 * away: the local copy's next chunk write waits for it, so the copy is still under way when the
 * test leaves the page, however fast this machine copies (a 330 MB copy on a quiet machine, or
 * the test's own steps on a loaded one, could otherwise finish it first).
 */
async function holdLocalCopy(page: Page): Promise<void> {
  await page.evaluate(
    (dbName) =>
      new Promise<void>((resolve, reject) => {
        const open = indexedDB.open(dbName);
        open.onerror = () => reject(open.error);
        open.onsuccess = () => {
          const chunks = open.result.transaction('chunks', 'readwrite').objectStore('chunks');
          const busy = () => {
            chunks.count().onsuccess = busy;
          };
          busy();
          resolve();
        };
      }),
    UPLOAD_DB_NAME,
  );
}

/**
 * What a negative claim ("nothing was sent") needs: a window in which it could have happened.
 * Each check runs every 250 ms for the window and must hold every time.
 */
async function holdsFor(ms: number, check: () => Promise<void>): Promise<void> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    await check();
    await new Promise((r) => setTimeout(r, 250));
  }
}

describe('the upload queue on a phone (issue 11)', () => {
  it("keeps A's queued upload from B on a shared phone, and sends it to A when A is back", { timeout: 180_000 }, async () => {
    const a = await newUser('phone-a');
    const b = await newUser('phone-b');
    const { context, page, proxy, errors } = await openPhone();
    const name = `a-only-${Date.now()}.bin`;
    const file = writeFile(name, 2 * MiB);
    try {
      // The connection drops right after sign-in: only the page's session check learned who A
      // is, the upload worker's own question never got an answer. A's upload is still A's.
      proxy.refuseWorkerAuthData = true;
      await loginViaUi(page, stack, a.username, USER_PASSWORD);
      await waitForServiceWorker(page);
      await context.setOffline(true);
      await page.getByLabel('Choose files to upload').setInputFiles(file.filePath);
      // Item 5: offline, the row says what it waits for instead of offering a Resume that cannot work.
      await waitForRowText(page, name, 'Offline: continues when the connection is back');
      expect(await row(page, name).getByRole('button', { name: 'Resume' }).count()).toBe(0);
      await page.screenshot({ path: screenshotPath(`queue-shared-${WIDTH}-a-offline`) });

      // A signs out and keeps the upload for the next sign-in.
      await page.getByRole('link', { name: 'Logout' }).click();
      await page.getByText('You have 1 upload that has not finished.').waitFor();
      await page.screenshot({ path: screenshotPath(`queue-shared-${WIDTH}-sign-out-question`) });
      await page.getByRole('button', { name: 'Keep for my next sign-in' }).click();
      await page.waitForURL(`${stack.siteUrl}/`);

      // The network is back and B signs in on the same browser: B sees nothing of A's.
      proxy.refuseWorkerAuthData = false;
      await context.setOffline(false);
      await loginViaUi(page, stack, b.username, USER_PASSWORD);
      await page.getByRole('heading', { name: 'File Uploader' }).waitFor();
      await page.screenshot({ path: screenshotPath(`queue-shared-${WIDTH}-b-dashboard`) });
      await holdsFor(4000, async () => {
        expect(await page.getByText(name).count()).toBe(0);
        expect(proxy.uploads).toEqual([]);
      });
      // Not from Background Sync with no page open either.
      const blank = await context.newPage();
      await page.close();
      await fireBackgroundSync(context, blank, stack.siteUrl);
      const tokenB = await b.token();
      await holdsFor(4000, async () => {
        expect(proxy.uploads).toEqual([]);
        expect(await filesOf(tokenB)).toEqual([]);
      });

      // B leaves; A signs in again and the kept upload goes to A's account, byte for byte.
      const again = await context.newPage();
      await again.goto(`${stack.siteUrl}/logout`);
      await again.waitForURL(`${stack.siteUrl}/`);
      await loginViaUi(again, stack, a.username, USER_PASSWORD);
      const listed = await waitForFileOf(await a.token(), name).catch(async (error: Error) => {
        // What the user sees says which step stalled (not named, not sent, or sent and refused).
        const shown = await row(again, name).textContent({ timeout: 1000 }).catch(() => 'no row');
        throw new Error(`${error.message}; A's row says "${shown}"; upload requests seen: ${proxy.uploads.length}`);
      });
      expect(await sha256OfUrl(listed.url)).toBe(file.sha256);
      await row(again, name).getByText('Done').waitFor({ timeout: 30_000 });
      expect(await filesOf(tokenB)).toEqual([]);
      expect(proxy.uploads.every((u) => u.fields.originalname === name)).toBe(true);
      expect(errors).toEqual([]);
    } finally {
      await context.close();
      await proxy.close();
    }
  });

  it("sends a file picked right after sign-in while the upload worker's own question goes unanswered", { timeout: 120_000 }, async () => {
    const a = await newUser('stalled');
    const { context, page, proxy } = await openPhone();
    const name = `stalled-${Date.now()}.bin`;
    const file = writeFile(name, MiB);
    try {
      // The connection stalls right after sign-in: the page's session check is answered, the
      // upload worker's own auth/data never is (the browser gives up on it after 15 s).
      proxy.holdWorkerAuthData = true;
      await loginViaUi(page, stack, a.username, USER_PASSWORD);
      await page.getByLabel('Choose files to upload').setInputFiles(file.filePath);
      const listed = await waitForFileOf(await a.token(), name, 30_000).catch(async (error: Error) => {
        const shown = await row(page, name).textContent({ timeout: 1000 }).catch(() => 'no row');
        throw new Error(`${error.message}; the row says "${shown}"; upload requests seen: ${proxy.uploads.length}`);
      });
      expect(await sha256OfUrl(listed.url)).toBe(file.sha256);
      // The worker asked, and the file went without waiting for the browser to give up on the
      // question (its 15 s timeout): before, the worker's start waited for it.
      expect(proxy.uploads[0]?.sinceHeldAuthDataMs).not.toBeNull();
      expect(proxy.uploads[0]?.sinceHeldAuthDataMs).toBeLessThan(10_000);
      await row(page, name).getByText('Done').waitFor({ timeout: 30_000 });
      // Once the worker's questions are answered again the row is still there, still the user's.
      proxy.releaseWorkerAuthData();
      await holdsFor(3000, async () => {
        expect(await row(page, name).getByText('Done').count()).toBe(1);
      });
      expect(proxy.uploads.filter((u) => u.fields.originalname === name && !u.cut)).toHaveLength(1);
    } finally {
      await context.close();
      await proxy.close();
    }
  });

  it('discards the queued uploads when the user signs out and says so', { timeout: 120_000 }, async () => {
    const a = await newUser('discard');
    const { context, page, proxy } = await openPhone();
    const name = `dropped-${Date.now()}.bin`;
    const file = writeFile(name, MiB);
    try {
      await loginViaUi(page, stack, a.username, USER_PASSWORD);
      // Offline, the sign-out screen's code comes from the service worker's precache: on a slow
      // machine it may not be installed yet right after sign-in.
      await waitForServiceWorker(page);
      await context.setOffline(true);
      await page.getByLabel('Choose files to upload').setInputFiles(file.filePath);
      // Queued and waiting for the network (not still being copied) when the user signs out.
      await waitForRowText(page, name, 'Offline: continues when the connection is back');
      await page.getByRole('link', { name: 'Logout' }).click();
      await page
        .getByRole('button', { name: 'Discard uploads' })
        .click({ timeout: 15_000 })
        .catch(async (error: Error) => {
          // Which step went wrong: no question asked (signed out at once) or still counting.
          const shown = await page.locator('body').innerText({ timeout: 1000 }).catch(() => '?');
          throw new Error(`${error.message}; at ${page.url()} the page says "${shown}"`);
        });
      await page.waitForURL(`${stack.siteUrl}/`);
      await context.setOffline(false);
      await loginViaUi(page, stack, a.username, USER_PASSWORD);
      await holdsFor(3000, async () => {
        expect(await page.getByText(name).count()).toBe(0);
        expect(proxy.uploads).toEqual([]);
      });
    } finally {
      await context.close();
      await proxy.close();
    }
  });

  it('lets a small file finish while a big one is still uploading, and labels the fourth Queued', { timeout: 180_000 }, async () => {
    const a = await newUser('three');
    const { context, page, proxy } = await openPhone();
    proxy.uploadRate = 1 * MiB;
    const stamp = Date.now();
    const big = [1, 2, 3].map((n) => writeFile(`big${n}-${stamp}.bin`, 12 * MiB));
    const small = writeFile(`small-${stamp}.txt`, 40 * 1024);
    const small2 = writeFile(`small2-${stamp}.txt`, 30 * 1024);
    try {
      await loginViaUi(page, stack, a.username, USER_PASSWORD);
      const picker = page.getByLabel('Choose files to upload');
      await picker.setInputFiles(big[0]!.filePath);
      await row(page, path.basename(big[0]!.filePath)).getByText('Uploading').waitFor({ timeout: 30_000 });
      await picker.setInputFiles(small.filePath);
      await row(page, path.basename(small.filePath)).getByText('Done').waitFor({ timeout: 30_000 });
      // The big one is still on its way: the small file did not wait behind it.
      expect(await row(page, path.basename(big[0]!.filePath)).locator('.hint').first().textContent()).toMatch(/Uploading/);
      await page.screenshot({ path: screenshotPath(`queue-parallel-${WIDTH}-small-done`) });

      await picker.setInputFiles([big[1]!.filePath, big[2]!.filePath]);
      await row(page, path.basename(big[2]!.filePath)).getByText('Uploading').waitFor({ timeout: 30_000 });
      await picker.setInputFiles(small2.filePath);
      // Three files move at once; the fourth waits its turn and says so.
      await row(page, path.basename(small2.filePath)).getByText('Queued').waitFor({ timeout: 15_000 });
      await page.screenshot({ path: screenshotPath(`queue-parallel-${WIDTH}-queued`) });
      expect(proxy.uploads.filter((u) => u.fields.originalname === path.basename(small2.filePath))).toEqual([]);

      proxy.uploadRate = Infinity;
      const token = await a.token();
      for (const f of [...big, small, small2]) {
        const listed = await waitForFileOf(token, path.basename(f.filePath), 120_000);
        expect(await sha256OfUrl(listed.url)).toBe(f.sha256);
      }
    } finally {
      await context.close();
      await proxy.close();
    }
  });

  it('cancels at once with an Undo, never moving the bar backwards', { timeout: 180_000 }, async () => {
    const a = await newUser('cancel');
    const { context, page, proxy } = await openPhone();
    proxy.uploadRate = 1 * MiB;
    const name = `undo-${Date.now()}.bin`;
    const file = writeFile(name, 8 * MiB);
    try {
      await loginViaUi(page, stack, a.username, USER_PASSWORD);
      // Every value the bar ever shows, in order.
      await page.evaluate(() => {
        const seen: number[] = [];
        (window as unknown as { barValues: number[] }).barValues = seen;
        new MutationObserver(() => {
          const bar = document.querySelector('li.upload-item [role="progressbar"]');
          const value = Number(bar?.getAttribute('aria-valuenow') ?? NaN);
          if (Number.isFinite(value) && seen.at(-1) !== value) seen.push(value);
        }).observe(document.body, { subtree: true, childList: true, attributes: true, attributeFilter: ['aria-valuenow'] });
      });
      await page.getByLabel('Choose files to upload').setInputFiles(file.filePath);
      const r = row(page, name);
      await expect.poll(() => r.getByRole('progressbar').getAttribute('aria-valuenow'), { timeout: 30_000 }).not.toBe('0');

      await r.getByRole('button', { name: 'Cancel' }).click();
      // The row reacts at once.
      await r.getByText('Cancelled').waitFor({ timeout: 500 });
      await page.screenshot({ path: screenshotPath(`queue-cancel-${WIDTH}-cancelled`) });
      await r.getByRole('button', { name: 'Undo' }).click();
      await r.getByText(/Uploading|Queued/).waitFor({ timeout: 5000 });
      proxy.uploadRate = 4 * MiB;
      await r.getByText('Done').waitFor({ timeout: 60_000 });
      const values = await page.evaluate(() => (window as unknown as { barValues: number[] }).barValues);
      expect(values.length).toBeGreaterThan(2);
      expect(values).toEqual([...values].sort((x, y) => x - y));
      const listed = await waitForFileOf(await a.token(), name);
      expect(await sha256OfUrl(listed.url)).toBe(file.sha256);

      // Without Undo the row goes after a few seconds, and the server forgets the upload.
      proxy.uploadRate = 1 * MiB;
      const gone = writeFile(`gone-${Date.now()}.bin`, 8 * MiB);
      const goneName = path.basename(gone.filePath);
      await page.getByLabel('Choose files to upload').setInputFiles(gone.filePath);
      await row(page, goneName).getByText('Uploading').waitFor({ timeout: 30_000 });
      await expect.poll(() => proxy.uploads.some((u) => u.fields.originalname === goneName), { timeout: 30_000 }).toBe(true);
      const uploadId = proxy.uploads.find((u) => u.fields.originalname === goneName)!.fields.uploadId!;
      await row(page, goneName).getByRole('button', { name: 'Cancel' }).click();
      await row(page, goneName).getByText('Cancelled').waitFor({ timeout: 500 });
      await row(page, goneName).waitFor({ state: 'detached', timeout: 15_000 });
      const token = await a.token();
      await expect.poll(async () => (await stack.api('/api/v1/files/upload/status', { token, uploadId })).status, { timeout: 15_000 }).toBe(404);
    } finally {
      await context.close();
      await proxy.close();
    }
  });

  it('says Preparing during the local copy, asks to stay, and after a reload asks for the file again and finishes it', { timeout: 300_000 }, async () => {
    const a = await newUser('copy');
    const { context, page, proxy } = await openPhone();
    const name = `copy-${Date.now()}.bin`;
    const file = writeFile(name, 330 * MiB);
    // Nothing reaches the API yet, so the test decides when bytes may move.
    proxy.blockedHost = new URL(stack.apiUrl).host;
    try {
      await page.goto(`${stack.siteUrl}/login`);
      proxy.blockedHost = null;
      await loginViaUi(page, stack, a.username, USER_PASSWORD);
      proxy.blockedHost = new URL(stack.apiUrl).host;
      await page.locator('h1').click(); // a user gesture: only then may a page ask to stay
      await page.getByLabel('Choose files to upload').setInputFiles(file.filePath);
      const r = row(page, name);
      await r.getByText(/Preparing: [\d.]+ MB saved on this device/).waitFor({ timeout: 30_000 });
      await page.screenshot({ path: screenshotPath(`queue-copy-${WIDTH}-preparing`) });
      await holdLocalCopy(page);

      // Leaving asks to stay; staying keeps the copy going.
      const asked = new Promise<string>((resolve) => page.once('dialog', (dialog) => void dialog.dismiss().then(() => resolve(dialog.type()))));
      void page.evaluate(() => window.location.reload()).catch(() => undefined);
      expect(await asked).toBe('beforeunload');
      await r.getByText(/Preparing/).waitFor();

      // Leaving anyway, mid-copy.
      page.once('dialog', (dialog) => void dialog.accept());
      await page.reload();
      proxy.blockedHost = null;
      const requestsAfterReload = proxy.uploads.length;
      const again = row(page, name);
      await waitForRowText(page, name, 'Not fully saved before the app closed');
      await page.screenshot({ path: screenshotPath(`queue-copy-${WIDTH}-choose-again`) });
      // Nothing is sent for an incomplete copy.
      await holdsFor(3000, async () => {
        expect(proxy.uploads.length).toBe(requestsAfterReload);
      });

      await again.getByLabel(`Choose ${name} again`).setInputFiles(file.filePath);
      const listed = await waitForFileOf(await a.token(), name, 240_000);
      expect(await sha256OfUrl(listed.url)).toBe(file.sha256);
      await again.getByText('Done').waitFor({ timeout: 30_000 });
    } finally {
      await context.close();
      await proxy.close();
    }
  });

  it('says the files list is offline, not that an error occurred, and loads it by itself once the server answers again', { timeout: 120_000 }, async () => {
    const a = await newUser('offline');
    const { context, page, proxy } = await openPhone();
    try {
      await loginViaUi(page, stack, a.username, USER_PASSWORD);
      await waitForServiceWorker(page);
      // Once more with the service worker in control, so it keeps the session's answer for offline use.
      await page.reload({ waitUntil: 'networkidle' });
      await context.setOffline(true);
      proxy.down = true;
      await page.goto(`${stack.siteUrl}/uploaded`);
      await page.getByText('You are offline and this list has not been saved on this device yet.').waitFor({ timeout: 15_000 });
      expect(await page.getByText('An internal error occurred').count()).toBe(0);
      await page.screenshot({ path: screenshotPath(`queue-offline-${WIDTH}-files`) });
      // Back online, the first requests still fail (the network coming up, a server restarting):
      // the page says so and keeps trying, and the list comes once the server answers.
      proxy.down = false;
      proxy.blockedHost = new URL(stack.apiUrl).host;
      await context.setOffline(false);
      await page.getByText('The server cannot be reached right now. This list will load by itself as soon as it answers.').waitFor({ timeout: 15_000 });
      proxy.blockedHost = null;
      await page.getByText('You have not uploaded any files yet.').waitFor({ timeout: 15_000 });
    } finally {
      await context.close();
      await proxy.close();
    }
  });
});
