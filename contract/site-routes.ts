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
