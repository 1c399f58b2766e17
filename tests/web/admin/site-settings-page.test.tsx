import { describe, expect, it, vi } from 'vitest';
import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { fakeServer } from './api-mock.ts';
import { renderAdmin } from './render-admin.tsx';

const api = vi.hoisted(() => ({ impl: (..._args: unknown[]): Promise<unknown> => Promise.reject(new Error('no fake set')) }));
vi.mock('../../../src/lib/api-client.ts', async (importOriginal) => ({
  ...(await importOriginal<Record<string, unknown>>()),
  call: (...args: unknown[]) => api.impl(...args),
}));
vi.mock('../../../src/lib/notify.ts', () => ({ notifySuccess: vi.fn(), notifyError: vi.fn() }));

const ADMIN = { username: 'root', role: 'admin' as const };

function serve() {
  const state = { allow_uploading: true, maintenance_mode: false, max_file_size: 2048, mimetypes: ['image/png', 'video/*'] };
  const server = fakeServer({
    '/api/v1/utils/settings': () => ({
      success: true,
      settings: { allow_uploading: state.allow_uploading, maintenance_mode: state.maintenance_mode, max_file_size: state.max_file_size },
    }),
    '/api/v1/admin/update/settings': (b) => {
      state[b.setting as 'allow_uploading'] = b.value as boolean;
      return { success: true };
    },
    '/api/v1/admin/set/maxfilesize': (b) => {
      state.max_file_size = b.value as number;
      return { success: true };
    },
    '/api/v1/admin/get/mimetypes': () => ({ success: true, mimetypes: state.mimetypes }),
    '/api/v1/admin/update/mimetypes': (b) => {
      state.mimetypes = [...state.mimetypes, ...String(b.mimeTypes).split(',')];
      return { success: true, mimetypes: state.mimetypes };
    },
    '/api/v1/admin/delete/mimetypes': (b) => {
      state.mimetypes = state.mimetypes.filter((m) => m !== b.mimeType);
      return { success: true, mimetypes: state.mimetypes };
    },
    '/api/v1/admin/get/roles': () => ({
      success: true,
      roles: [
        { _id: 'r1', name: 'default', invites_allowed: 1 },
        { _id: 'r2', name: 'trusted', invites_allowed: 5 },
      ],
    }),
    '/api/v1/admin/set/uploadlimit': () => ({ success: true }),
    '/api/v1/admin/get/allstats': () => ({
      success: true,
      stats: {
        totalFilesUploaded: 7,
        totalStorageUsed: 3 * 1_073_741_824,
        totalUsers: 4,
        photos: { count: 5, size: 1_048_576 },
        videos: { count: 1, size: 2 * 1_073_741_824 },
        others: { count: 1, size: 0 },
      },
    }),
  });
  api.impl = server.impl as typeof api.impl;
  return server;
}

describe('admin site settings screen', () => {
  it('reads both switches and writes a flip through admin/update/settings', async () => {
    const server = serve();
    renderAdmin('/admin/settings', ADMIN);
    const maintenance = await screen.findByRole('switch', { name: /Maintenance mode/ });
    await waitFor(() => expect(screen.getByRole('switch', { name: /Allow uploading/ })).toBeChecked());
    expect(maintenance).not.toBeChecked();
    await userEvent.click(maintenance);
    // Locking everyone out asks first: Cancel sends nothing.
    await userEvent.click(within(await screen.findByRole('alertdialog', { name: /Turn on maintenance mode\?/ })).getByRole('button', { name: 'Cancel' }));
    expect(screen.getByRole('switch', { name: /Maintenance mode/ })).not.toBeChecked();
    expect(server.calls.some((c) => c.path === '/api/v1/admin/update/settings')).toBe(false);
    await userEvent.click(maintenance);
    await userEvent.click(within(await screen.findByRole('alertdialog')).getByRole('button', { name: 'Turn on' }));
    await waitFor(() => expect(screen.getByRole('switch', { name: /Maintenance mode/ })).toBeChecked());
    expect(server.calls.find((c) => c.path === '/api/v1/admin/update/settings')?.body).toEqual({ setting: 'maintenance_mode', value: true });
  });

  it('asks before stopping every upload, and not before allowing them again', async () => {
    const server = serve();
    renderAdmin('/admin/settings', ADMIN);
    const uploading = await screen.findByRole('switch', { name: /Allow uploading/ });
    await waitFor(() => expect(uploading).toBeChecked());
    await userEvent.click(uploading);
    await userEvent.click(within(await screen.findByRole('alertdialog', { name: /Stop all uploads\?/ })).getByRole('button', { name: 'Stop uploads' }));
    await waitFor(() => expect(screen.getByRole('switch', { name: /Allow uploading/ })).not.toBeChecked());
    await userEvent.click(screen.getByRole('switch', { name: /Allow uploading/ }));
    await waitFor(() => expect(screen.getByRole('switch', { name: /Allow uploading/ })).toBeChecked());
    expect(screen.queryByRole('alertdialog')).toBeNull();
    expect(server.calls.filter((c) => c.path === '/api/v1/admin/update/settings').map((c) => c.body)).toEqual([
      { setting: 'allow_uploading', value: false },
      { setting: 'allow_uploading', value: true },
    ]);
  });

  it('shows the max file size in GB from 1024 MB and saves a new value in MB', async () => {
    const server = serve();
    renderAdmin('/admin/settings', ADMIN);
    expect(await screen.findByText('Current: 2.00 GB')).toBeInTheDocument();
    await userEvent.type(screen.getByLabelText('New maximum (MB)'), '500');
    await userEvent.click(within(screen.getByRole('region', { name: 'Maximum file size' })).getByRole('button', { name: 'Save' }));
    expect(await screen.findByText('Current: 500 MB')).toBeInTheDocument();
    expect(server.calls.find((c) => c.path === '/api/v1/admin/set/maxfilesize')?.body).toEqual({ value: 500 });
  });

  it('adds comma-separated MIME types, refuses a malformed one, and deletes one', async () => {
    const server = serve();
    renderAdmin('/admin/settings', ADMIN);
    const input = await screen.findByLabelText('Add MIME types (comma-separated)');
    await userEvent.type(input, 'image/gif, not a type');
    await userEvent.click(screen.getByRole('button', { name: 'Add' }));
    expect(screen.getByText('Not a MIME type: not a type')).toBeInTheDocument();
    expect(server.calls.some((c) => c.path === '/api/v1/admin/update/mimetypes')).toBe(false);

    await userEvent.clear(input);
    await userEvent.type(input, 'image/gif, audio/*');
    await userEvent.click(screen.getByRole('button', { name: 'Add' }));
    const list = screen.getByRole('list', { name: 'Allowed MIME types' });
    await waitFor(() => expect(within(list).getByText('audio/*')).toBeInTheDocument());
    expect(server.calls.find((c) => c.path === '/api/v1/admin/update/mimetypes')?.body).toEqual({ mimeTypes: 'image/gif,audio/*' });

    await userEvent.click(screen.getByRole('button', { name: 'Delete video/*' }));
    await userEvent.click(within(await screen.findByRole('alertdialog')).getByRole('button', { name: 'Delete' }));
    await waitFor(() => expect(within(list).queryByText('video/*')).toBeNull());
  });

  it('keeps invite limits at 0 or more and saves one per role', async () => {
    const server = serve();
    renderAdmin('/admin/settings', ADMIN);
    const trusted = await screen.findByRole('spinbutton', { name: 'trusted' });
    expect(trusted).toHaveAttribute('min', '0');
    await userEvent.clear(trusted);
    await userEvent.type(trusted, '-1');
    await userEvent.click(screen.getByRole('button', { name: 'Save the trusted limit' }));
    expect(screen.getByText('Enter a whole number from 0 to 100000.')).toBeInTheDocument();
    expect(server.calls.some((c) => c.path === '/api/v1/admin/set/uploadlimit')).toBe(false);
    await userEvent.clear(trusted);
    await userEvent.type(trusted, '0');
    await userEvent.click(screen.getByRole('button', { name: 'Save the trusted limit' }));
    await waitFor(() =>
      expect(server.calls.find((c) => c.path === '/api/v1/admin/set/uploadlimit')?.body).toEqual({ roleName: 'trusted', invitesAllowed: 0 }),
    );
  });

  it('shows site statistics with a chart of photos, videos and others by count and size', async () => {
    serve();
    renderAdmin('/admin/settings', ADMIN);
    const files = await screen.findByRole('figure', { name: 'Files by kind' });
    const size = screen.getByRole('figure', { name: 'Storage by kind' });
    expect(within(files).getByText('Photos').parentElement).toHaveTextContent('5');
    expect(within(size).getByText('Videos').parentElement).toHaveTextContent('2.00 GB');
    expect(within(size).getByText('Photos').parentElement).toHaveTextContent('1.00 MB');
    expect(screen.getByText('3.00 GB')).toBeInTheDocument();
  });
});

describe('saving a weekly invite limit from the keyboard', () => {
  it('keeps focus in the field it was saved from once the roles are read again', async () => {
    const roles = [
      { _id: 'r1', name: 'default', invites_allowed: 1 },
      { _id: 'r2', name: 'trusted', invites_allowed: 5 },
    ];
    const server = fakeServer({
      '/api/v1/admin/get/roles': () => ({ success: true, roles: roles.map((r) => ({ ...r })) }),
      '/api/v1/admin/set/uploadlimit': (b) => {
        roles.find((r) => r.name === b.roleName)!.invites_allowed = Number(b.invitesAllowed);
        return { success: true };
      },
    });
    api.impl = server.impl as typeof api.impl;
    renderAdmin('/admin/settings', ADMIN);
    const trusted = await screen.findByRole('spinbutton', { name: 'trusted' });
    await userEvent.clear(trusted);
    await userEvent.type(trusted, '7{Enter}');
    await waitFor(() => expect(server.calls.filter((c) => c.path === '/api/v1/admin/get/roles')).toHaveLength(2));
    await waitFor(() => expect(screen.getByRole('spinbutton', { name: 'trusted' })).toHaveValue(7));
    expect(document.activeElement).toBe(screen.getByRole('spinbutton', { name: 'trusted' }));
  });
});

describe('removing an allowed MIME type from the keyboard', () => {
  it('puts focus on the section heading once the removed type is gone, not on nothing', async () => {
    serve();
    renderAdmin('/admin/settings', ADMIN);
    const user = userEvent.setup();
    await user.click(await screen.findByRole('button', { name: 'Delete video/*' }));
    await user.keyboard('{Tab}{Enter}');
    await waitFor(() => expect(screen.queryByRole('button', { name: 'Delete video/*' })).toBeNull());
    await waitFor(() => expect(document.activeElement).toBe(screen.getByRole('heading', { name: 'Allowed MIME types' })), { timeout: 3_000 });
  });
});
