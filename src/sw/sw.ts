/// <reference lib="webworker" />
import { clientsClaim } from 'workbox-core';
import { keepRuntimeConfig, routeAppShell, routeRuntimeConfig } from './app-shell.ts';
import { clearApiCache, isCachedRead, networkFirstRead } from './api-cache.ts';
import { acceptShare } from './share-target.ts';
import { SHARE_TARGET_PATH } from '../../contract/site-routes.ts';
import { resumeQueue, SYNC_TAG } from './background-sync.ts';
import { broadcastChannel } from '../upload/queue/environment.ts';

declare const self: ServiceWorkerGlobalScope;

// Style habit 8: listeners only; what they do lives beside this file.

// The first install takes the open page at once, so it works offline without a reload; an
// update only activates when the prompt (src/lib/pwa.ts) sends SKIP_WAITING, never mid-upload.
clientsClaim();
routeAppShell(self.__WB_MANIFEST);
routeRuntimeConfig();

const changes = broadcastChannel();

self.addEventListener('install', (event) => event.waitUntil(keepRuntimeConfig()));

self.addEventListener('fetch', (event) => {
  const { request } = event;
  const url = new URL(request.url);
  if (request.method === 'POST' && url.origin === self.location.origin && url.pathname === SHARE_TARGET_PATH) {
    event.respondWith(acceptShare(request, () => changes.post()));
    return;
  }
  if (isCachedRead(request)) event.respondWith(networkFirstRead(request));
});

self.addEventListener('sync', (event: Event) => {
  const sync = event as ExtendableEvent & { tag: string };
  if (sync.tag === SYNC_TAG) sync.waitUntil(resumeQueue(self));
});

self.addEventListener('message', (event) => {
  // workbox-window's messageSkipWaiting(), sent by the update prompt only when no upload runs.
  if ((event.data as { type?: string } | null)?.type === 'SKIP_WAITING') void self.skipWaiting();
  if (event.data === 'stash-clear-api-cache') event.waitUntil(clearApiCache());
});

self.addEventListener('notificationclick', (event) => {
  event.notification.close();
  event.waitUntil(self.clients.openWindow('/dashboard'));
});
