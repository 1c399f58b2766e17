/**
 * Spec §2's routes, the one list the site server (404 for any other path, issue 11 item 10) and
 * the web app agree on. A path not matched here is the app's 'Page Not Found' screen.
 */
export const CLIENT_ROUTES: readonly string[] = [
  '/',
  '/privacy',
  '/tos',
  '/faq',
  '/login',
  '/register',
  '/logout',
  '/dashboard',
  '/uploaded',
  '/settings',
  '/invites',
  '/admin/settings',
  '/admin/users',
  '/admin/uploaded',
  '/admin/invitelogs',
];

/** True for a route of the app; a trailing slash and the query string do not matter (as in the router). */
export function isClientRoute(url: string): boolean {
  const path = url.split(/[?#]/, 1)[0] ?? '';
  const trimmed = path.length > 1 ? path.replace(/\/+$/, '') : path;
  return CLIENT_ROUTES.includes(trimmed === '' ? '/' : trimmed);
}

/** The manifest's share_target action (vite.config.ts), which the service worker takes (src/sw/share-target.ts). */
export const SHARE_TARGET_PATH = '/share-target';
/** Where a share goes once its files are in the upload queue. */
export const SHARED_REDIRECT = '/dashboard?shared=1';
/** Where a share goes whose files could not be kept: the app asks for them through the file picker (src/lib/pwa.ts). */
export const SHARE_FAILED_REDIRECT = '/dashboard?shared=failed';
/** Where a share goes that brought no file (only text or a link): the app says nothing was added (src/lib/pwa.ts). */
export const SHARE_NONE_REDIRECT = '/dashboard?shared=none';
