/** Issue 11 item 10: one document.title per screen, named as the screen's heading says (spec §2). */
const TITLES: Record<string, string> = {
  '/privacy': 'Privacy Policy',
  '/tos': 'Terms of Service',
  '/faq': 'FAQ',
  '/login': 'Login',
  '/register': 'Register',
  '/logout': 'Logout',
  '/dashboard': 'File Uploader',
  '/uploaded': 'Uploaded Files',
  '/settings': 'Settings',
  '/invites': 'Invites Given',
  '/admin/uploaded': 'All files',
  '/admin/settings': 'Site Settings',
  '/admin/invitelogs': 'Invite Logs',
  '/admin/users': 'Users',
};

/** The title for a pathname: the site's name alone on the landing page, 'Page Not Found' for any other path. */
export function pageTitle(pathname: string, siteName: string): string {
  const path = pathname.length > 1 ? pathname.replace(/\/+$/, '') : pathname;
  if (path === '/') return `${siteName} · Invite-only file hosting`;
  const title = TITLES[path] ?? 'Page Not Found';
  return `${title} · ${siteName}`;
}
