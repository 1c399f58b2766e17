import type { BrowserContext, Page } from 'playwright-core';

/** The service worker controls the page (it claims clients on first install). */
export async function waitForServiceWorker(page: Page): Promise<void> {
  await page.waitForFunction(() => navigator.serviceWorker?.controller !== null, undefined, { timeout: 30_000 });
}

/** Fires the upload queue's Background Sync in the site's service worker, as Chromium does when the network returns. */
export async function fireBackgroundSync(context: BrowserContext, page: Page, siteUrl: string): Promise<void> {
  const cdp = await context.newCDPSession(page);
  const registrations = new Promise<string>((resolve) => {
    cdp.on('ServiceWorker.workerRegistrationUpdated', (event: { registrations: { registrationId: string; scopeURL: string; isDeleted: boolean }[] }) => {
      const ours = event.registrations.find((r) => r.scopeURL.startsWith(siteUrl) && !r.isDeleted);
      if (ours) resolve(ours.registrationId);
    });
  });
  await cdp.send('ServiceWorker.enable');
  const registrationId = await registrations;
  await cdp.send('ServiceWorker.dispatchSyncEvent', { origin: siteUrl, registrationId, tag: 'stash-upload-queue', lastChance: false });
}
