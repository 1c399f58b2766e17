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

const CONFIG_CACHE = 'stash-config';
const CONFIG_PATH = '/config.json';

/** /config.json names this deployment's hosts (design §2): fresh when online, last known offline. */
export function routeRuntimeConfig(): void {
  registerRoute(
    ({ url, request }) => request.method === 'GET' && url.origin === self.location.origin && url.pathname === CONFIG_PATH,
    new NetworkFirst({ cacheName: CONFIG_CACHE, networkTimeoutSeconds: 5 }),
  );
}

/**
 * Stores /config.json as the worker installs. It is not in the build's precache (one build
 * serves every deployment), and the first page fetched it before any worker could see it: after
 * a single visit, every page offline said "Stash could not start", and queued uploads waited
 * for a page that could not open.
 */
export async function keepRuntimeConfig(): Promise<void> {
  try {
    const cache = await caches.open(CONFIG_CACHE);
    await cache.add(CONFIG_PATH);
  } catch {
    // Offline as it installs: the next fetch of the page stores it (routeRuntimeConfig).
  }
}
