import type { ComponentType } from 'react';
import type { RouteObject } from 'react-router-dom';
import { RequireRole } from './require-role.tsx';
import './admin.css';

type Role = 'default' | 'trusted' | 'mod' | 'admin';

const ADMIN = ['admin'] as const;
// Design §6: a mod sees All files and may list and delete any file.
const MOD_OR_ADMIN = ['mod', 'admin'] as const;

/**
 * An admin screen loaded on demand: most visitors never open one, so their code stays out of
 * the bundle a phone downloads first. The role check wraps the page once it has loaded.
 */
function adminPage(path: string, allow: readonly Role[], load: () => Promise<ComponentType>): RouteObject {
  return {
    path,
    lazy: async () => {
      const Page = await load();
      return {
        Component: () => (
          <RequireRole allow={allow}>
            <Page />
          </RequireRole>
        ),
      };
    },
  };
}

/** Children of the signed-in layout (src/app/routes.tsx places them). */
export const adminRoutes: RouteObject[] = [
  adminPage('admin/settings', ADMIN, async () => (await import('./site-settings-page.tsx')).SiteSettingsPage),
  adminPage('admin/users', ADMIN, async () => (await import('./users-page.tsx')).UsersPage),
  adminPage('admin/uploaded', MOD_OR_ADMIN, async () => (await import('./all-files-page.tsx')).AllFilesPage),
  adminPage('admin/invitelogs', ADMIN, async () => (await import('./invite-logs-page.tsx')).InviteLogsPage),
];
