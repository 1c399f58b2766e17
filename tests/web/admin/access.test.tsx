import { describe, expect, it, vi } from 'vitest';
import { screen, waitFor } from '@testing-library/react';
import { notifyError } from '../../../src/lib/notify.ts';
import { NOT_AUTHORIZED } from '../../../src/features/admin/all-files-page.tsx';
import { fakeServer, refusal } from './api-mock.ts';
import { renderAdmin } from './render-admin.tsx';

const api = vi.hoisted(() => ({ impl: (..._args: unknown[]): Promise<unknown> => Promise.reject(new Error('no fake set')) }));
vi.mock('../../../src/lib/api-client.ts', async (importOriginal) => ({
  ...(await importOriginal<Record<string, unknown>>()),
  call: (...args: unknown[]) => api.impl(...args),
}));
vi.mock('../../../src/lib/notify.ts', () => ({ notifySuccess: vi.fn(), notifyError: vi.fn() }));

const emptyLists = () =>
  fakeServer({
    '/api/v1/admin/get/users': () => ({ success: true, users: [], totalPages: 0, totalUsers: 0 }),
    '/api/v1/admin/get/uploaded': () => ({ success: true, files: [], totalImages: 0 }),
    '/api/v1/admin/get/invitelogs': () => ({ success: true, invites: [], totalPages: 0, total: 0 }),
    '/api/v1/utils/settings': () => ({ success: true, settings: { allow_uploading: true, maintenance_mode: false, max_file_size: 1024 } }),
    '/api/v1/admin/get/mimetypes': () => ({ success: true, mimetypes: [] }),
    '/api/v1/admin/get/roles': () => ({ success: true, roles: [] }),
    '/api/v1/admin/get/allstats': () => ({
      success: true,
      stats: { totalFilesUploaded: 0, totalStorageUsed: 0, totalUsers: 1, photos: { count: 0, size: 0 }, videos: { count: 0, size: 0 }, others: { count: 0, size: 0 } },
    }),
  });

const ADMIN_ONLY = ['/admin/users', '/admin/settings', '/admin/invitelogs'];

describe('who may open the admin screens', () => {
  it.each(['default', 'trusted', 'mod'] as const)('sends a %s user from every admin-only page to /dashboard', async (role) => {
    for (const path of ADMIN_ONLY) {
      const server = emptyLists();
      api.impl = server.impl as typeof api.impl;
      const { router, unmount } = renderAdmin(path, { username: 'someone', role });
      expect(await screen.findByText('Dashboard page')).toBeInTheDocument();
      expect(router.state.location.pathname).toBe('/dashboard');
      // Nothing of the admin screen asked the server for anything.
      expect(server.calls).toEqual([]);
      unmount();
    }
  });

  it('lets a mod open All files but sends a trusted user away from it', async () => {
    api.impl = emptyLists().impl as typeof api.impl;
    const mod = renderAdmin('/admin/uploaded', { username: 'm', role: 'mod' });
    expect(await screen.findByRole('heading', { name: 'All files' })).toBeInTheDocument();
    mod.unmount();

    const trusted = renderAdmin('/admin/uploaded', { username: 't', role: 'trusted' });
    expect(await screen.findByText('Dashboard page')).toBeInTheDocument();
    expect(trusted.router.state.location.pathname).toBe('/dashboard');
  });

  it('opens every admin page for an admin', async () => {
    api.impl = emptyLists().impl as typeof api.impl;
    const titles: Record<string, string> = {
      '/admin/users': 'Users',
      '/admin/settings': 'Site Settings',
      '/admin/invitelogs': 'Invite Logs',
      '/admin/uploaded': 'All files',
    };
    for (const [path, title] of Object.entries(titles)) {
      const { unmount } = renderAdmin(path, { username: 'root', role: 'admin' });
      expect(await screen.findByRole('heading', { level: 1, name: title })).toBeInTheDocument();
      unmount();
    }
  });

  it('shows the unauthorized answer of the file list and goes to /', async () => {
    api.impl = fakeServer({
      '/api/v1/admin/get/uploaded': () => {
        throw refusal(403, NOT_AUTHORIZED);
      },
    }).impl as typeof api.impl;
    const { router } = renderAdmin('/admin/uploaded', { username: 'm', role: 'mod' });
    expect(await screen.findByText('Home page')).toBeInTheDocument();
    expect(router.state.location.pathname).toBe('/');
    await waitFor(() => expect(notifyError).toHaveBeenCalledWith('You are not authorized to access this resource.'));
  });
});
