import { Workbox } from 'workbox-window';
import { getToken } from './token.ts';

export const SHARE_FAILED_MESSAGE = 'The shared files could not be saved on this device. Please choose them with the file picker.';
export const SHARE_NONE_MESSAGE = 'Nothing was shared: Stash takes files, and none came with the share. Choose them with the file picker.';
const UPDATE_POLL_MS = 3000;

/**
 * Issue 5 wiring, called once from main.tsx after /config.json is loaded: resume stored uploads
 * on whichever page opens, and register the service worker with an update prompt that never
 * reloads while the queue has work.
 */
export function registerPwa(): void {
  const shareProblem = shareOutcomeMessage(window.location.search);
  if (shareProblem) void import('./notify.ts').then(({ notifyError }) => notifyError(shareProblem));
  // The queue resumes without the user doing anything: start its worker now, not on the
  // dashboard. Only a signed-in visitor can have stored uploads, so a public page's first load
  // never downloads the uploader (issue 9: < 60 KiB of JavaScript for `/`).
  if (getToken()) {
    loadUploader()
      .then(({ uploader, UploadQueueClient }) => {
        if (uploader instanceof UploadQueueClient) void uploader.resumeStored();
      })
      // A chunk that cannot be fetched (offline before the service worker cached it): the
      // dashboard starts the queue when it opens.
      .catch((error: unknown) => console.error('The upload queue did not start', error));
  }
  // The dev server has no service worker (vite-plugin-pwa devOptions off). MODE, not DEV: a
  // build run with NODE_ENV=test (vitest) still has MODE 'production' and must register.
  if (!('serviceWorker' in navigator) || import.meta.env.MODE === 'development') return;
  const workbox = new Workbox('/sw.js', { scope: '/' });
  workbox.addEventListener('waiting', () => showUpdatePrompt(workbox, hasWork));
  void workbox.register().catch((error: unknown) => console.error('Service worker registration failed', error));
}

/**
 * What the page says after a share the service worker could not queue (src/sw/share-target.ts):
 * `shared=failed`, nothing of it kept; `shared=none`, no file came with it. Null otherwise
 * (`shared=1` is the dashboard's own banner).
 */
export function shareOutcomeMessage(search: string): string | null {
  const shared = new URLSearchParams(search).get('shared');
  if (shared === 'failed') return SHARE_FAILED_MESSAGE;
  if (shared === 'none') return SHARE_NONE_MESSAGE;
  return null;
}

async function loadUploader() {
  const [{ getUploader }, { isActive, UploadQueueClient }] = await Promise.all([import('../upload/page/instance.ts'), import('../upload/page/queue-client.ts')]);
  return { uploader: getUploader(), isActive, UploadQueueClient };
}

async function hasWork(): Promise<boolean> {
  const { uploader, isActive, UploadQueueClient } = await loadUploader();
  if (uploader instanceof UploadQueueClient) return uploader.hasWork();
  return (await uploader.list()).some(isActive);
}

/** What the update prompt needs of workbox-window's Workbox (narrowed so it can be tested). */
export interface UpdateTarget {
  addEventListener(type: 'controlling', listener: () => void): void;
  messageSkipWaiting(): void;
}

/** A small banner outside React, so it works on every page and before the router exists. */
export function showUpdatePrompt(workbox: UpdateTarget, hasWorkNow: () => Promise<boolean>, pollMs = UPDATE_POLL_MS): void {
  if (document.getElementById('pwa-update')) return;
  const banner = document.createElement('div');
  banner.id = 'pwa-update';
  banner.className = 'banner banner-success';
  banner.setAttribute('role', 'status');
  Object.assign(banner.style, { position: 'fixed', insetInline: '1rem', bottom: '1rem', zIndex: '300', display: 'flex', gap: '0.75rem', alignItems: 'center', flexWrap: 'wrap' });
  const text = document.createElement('span');
  text.textContent = 'A new version of Stash is ready.';
  const button = document.createElement('button');
  button.type = 'button';
  button.className = 'btn btn-primary btn-small';
  button.textContent = 'Update';
  banner.append(text, button);
  document.body.append(banner);

  button.addEventListener('click', async () => {
    button.disabled = true;
    // Reloading mid-upload would cut a chunk off; the queue would resume, but the user asked
    // for an update, not a hiccup: wait until it is idle.
    while (await hasWorkNow()) {
      text.textContent = 'Uploads are still running: Stash will update when they finish.';
      await new Promise((resolve) => setTimeout(resolve, pollMs));
    }
    workbox.addEventListener('controlling', () => window.location.reload());
    workbox.messageSkipWaiting();
  });
}
