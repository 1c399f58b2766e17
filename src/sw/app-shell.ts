import { cleanupOutdatedCaches, createHandlerBoundToURL, precacheAndRoute } from 'workbox-precaching';
import { NavigationRoute, registerRoute } from 'workbox-routing';
import { NetworkFirst } from 'workbox-strategies';
import type { PrecacheEntry } from 'workbox-precaching';

/**
 * Issue 5 offline: the built shell, static pages, icons and the decorative pictures come from
 * the precache; every navigation is answered with index.html (the site is an SPA, design §2), so
 * /, /faq, /dashboard … reload with no network.
 */
export function routeAppShell(manifest: (string | PrecacheEntry)[]): void {
  precacheAndRoute(manifest);
  cleanupOutdatedCaches();
  registerRoute(new NavigationRoute(createHandlerBoundToURL('index.html')));
}

/** /config.json names this deployment's hosts (design §2): fresh when online, last known offline. */
export function routeRuntimeConfig(): void {
  registerRoute(
    ({ url, request }) => request.method === 'GET' && url.origin === self.location.origin && url.pathname === '/config.json',
    new NetworkFirst({ cacheName: 'stash-config', networkTimeoutSeconds: 5 }),
  );
}
