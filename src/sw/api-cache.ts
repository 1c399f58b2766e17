/**
 * Issue 5 offline: signed-in pages show the last known data. Every API call is a POST
 * (spec §7), which the Cache API cannot key on, so reads are cached under a synthetic GET URL
 * made of the path and a SHA-256 of the body. The body carries the token, so one account never
 * sees another's cached answers. Network first: the cache answers only when the network fails.
 */
const CACHE = 'stash-api-reads';
const MAX_AGE_MS = 7 * 24 * 3600 * 1000;
/** Header on a cached answer, so the page can tell it is showing old data. */
export const FROM_CACHE_HEADER = 'x-stash-from-cache';

// Only calls that read: anything that changes state must reach the server or fail visibly.
const READS = new Set([
  '/api/v1/auth/data',
  '/api/v1/auth/apikeys',
  '/api/v1/utils/filesize',
  '/api/v1/utils/settings',
  '/api/v1/utils/userstats',
  '/api/v1/utils/invites/invite-limit',
  '/api/v1/files/uploaded',
  '/api/v1/manage/invites',
  '/api/v1/admin/get/roles',
  '/api/v1/admin/get/mimetypes',
  '/api/v1/admin/get/allstats',
  '/api/v1/admin/get/users',
  '/api/v1/admin/get/uploaded',
  '/api/v1/admin/get/invitelogs',
]);

export function isCachedRead(request: Request): boolean {
  return request.method === 'POST' && READS.has(new URL(request.url).pathname);
}

async function cacheKey(request: Request, body: string): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(body)));
  const hex = Array.from(digest, (b) => b.toString(16).padStart(2, '0')).join('');
  const url = new URL(request.url);
  return `${url.origin}${url.pathname}?body=${hex}`;
}

export async function networkFirstRead(request: Request): Promise<Response> {
  const body = await request.clone().text();
  const key = await cacheKey(request, body);
  const cache = await caches.open(CACHE);
  try {
    const response = await fetch(request);
    if (response.ok) await cache.put(key, withHeader(response.clone(), 'x-stash-cached-at', String(Date.now())));
    // A refusal (401 after logout, 403 after a ban) must not leave old data behind.
    else if (response.status === 401 || response.status === 403) await cache.delete(key);
    return response;
  } catch (error) {
    const cached = await cache.match(key);
    const cachedAt = Number(cached?.headers.get('x-stash-cached-at') ?? 0);
    if (!cached || Date.now() - cachedAt > MAX_AGE_MS) throw error;
    return withHeader(cached, FROM_CACHE_HEADER, '1');
  }
}

/** Sign-out (or a page that asks) forgets every cached answer. */
export async function clearApiCache(): Promise<void> {
  await caches.delete(CACHE);
}

function withHeader(response: Response, name: string, value: string): Response {
  const headers = new Headers(response.headers);
  headers.set(name, value);
  // The page reads this cross-origin answer through CORS: let it see the marker.
  const exposed = headers.get('access-control-expose-headers');
  headers.set('access-control-expose-headers', exposed ? `${exposed}, ${FROM_CACHE_HEADER}` : FROM_CACHE_HEADER);
  return new Response(response.body, { status: response.status, statusText: response.statusText, headers });
}
