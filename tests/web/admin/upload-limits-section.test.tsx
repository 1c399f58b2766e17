import { describe, expect, it, vi } from 'vitest';
import { screen, waitFor } from '@testing-library/react';
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
  const limits = {
    max_unfinished_uploads: 20,
    max_unfinished_size: 2048,
    max_url_fetches: 3,
    storage_quota: { default: 500 as number | null, trusted: null, mod: null, admin: null },
  };
  const server = fakeServer({
    '/api/v1/admin/get/limits': () => ({ success: true, limits }),
    '/api/v1/admin/set/limit': (b) => {
      limits[b.setting as 'max_url_fetches'] = b.value as number;
      return { success: true };
    },
    '/api/v1/admin/set/storagequota': (b) => {
      limits.storage_quota[b.roleName as 'default'] = b.quotaMb as number;
      return { success: true };
    },
    '/api/v1/admin/delete/storagequota': (b) => {
      limits.storage_quota[b.roleName as 'default'] = null;
      return { success: true };
    },
  });
  api.impl = server.impl as typeof api.impl;
  return server;
}

describe('upload limits in Site Settings (design §6)', () => {
  it('shows the per-user bounds and saves a new one, refusing a value the server would refuse', async () => {
    const server = serve();
    renderAdmin('/admin/settings', ADMIN);
    const uploads = await screen.findByRole('spinbutton', { name: 'Unfinished uploads per user (uploads)' });
    expect(uploads).toHaveValue(20);
    expect(screen.getByRole('spinbutton', { name: 'Unfinished upload size per user (MB)' })).toHaveValue(2048);
    expect(screen.getByRole('spinbutton', { name: 'URL uploads at once per user (fetches)' })).toHaveValue(3);

    await userEvent.clear(uploads);
    await userEvent.type(uploads, '0');
    await userEvent.click(screen.getByRole('button', { name: 'Save Unfinished uploads per user (uploads)' }));
    expect(screen.getByText('Enter a whole number from 1 to 1048576.')).toBeInTheDocument();
    expect(server.calls.some((c) => c.path === '/api/v1/admin/set/limit')).toBe(false);

    await userEvent.clear(uploads);
    await userEvent.type(uploads, '5');
    await userEvent.click(screen.getByRole('button', { name: 'Save Unfinished uploads per user (uploads)' }));
    await waitFor(() => expect(server.calls.find((c) => c.path === '/api/v1/admin/set/limit')?.body).toEqual({ setting: 'max_unfinished_uploads', value: 5 }));
    await waitFor(() => expect(screen.getByRole('spinbutton', { name: 'Unfinished uploads per user (uploads)' })).toHaveValue(5));
  });

  it('shows each role quota, empty meaning unlimited, and lifts or sets one', async () => {
    const server = serve();
    renderAdmin('/admin/settings', ADMIN);
    const quota = await screen.findByRole('spinbutton', { name: 'default quota' });
    expect(quota).toHaveValue(500);
    expect(screen.getByRole('spinbutton', { name: 'trusted quota' })).toHaveValue(null);
    expect(screen.getByRole('spinbutton', { name: 'trusted quota' })).toHaveAttribute('placeholder', 'Unlimited');

    await userEvent.clear(quota);
    await userEvent.click(screen.getByRole('button', { name: 'Save default quota' }));
    await waitFor(() =>
      expect(server.calls.find((c) => c.path === '/api/v1/admin/delete/storagequota')?.body).toEqual({ roleName: 'default' }),
    );

    await waitFor(() => expect(screen.getByRole('spinbutton', { name: 'default quota' })).toHaveValue(null));
    const mod = screen.getByRole('spinbutton', { name: 'mod quota' });
    await userEvent.type(mod, '0');
    await userEvent.click(screen.getByRole('button', { name: 'Save mod quota' }));
    expect(screen.getByText('Enter a whole number from 1 to 1073741824, or leave it empty for no limit.')).toBeInTheDocument();
    await userEvent.clear(mod);
    await userEvent.type(mod, '10240');
    await userEvent.click(screen.getByRole('button', { name: 'Save mod quota' }));
    await waitFor(() => expect(server.calls.filter((c) => c.path === '/api/v1/admin/set/storagequota').at(-1)?.body).toEqual({ roleName: 'mod', quotaMb: 10240 }));
  });
});

describe('saving an upload limit from the keyboard', () => {
  it('keeps focus in the field it was saved from once the limits are read again', async () => {
    const server = serve();
    renderAdmin('/admin/settings', ADMIN);
    const uploads = await screen.findByRole('spinbutton', { name: 'Unfinished uploads per user (uploads)' });
    await userEvent.clear(uploads);
    await userEvent.type(uploads, '5{Enter}');
    await waitFor(() => expect(server.calls.filter((c) => c.path === '/api/v1/admin/get/limits')).toHaveLength(2));
    await waitFor(() => expect(screen.getByRole('spinbutton', { name: 'Unfinished uploads per user (uploads)' })).toHaveValue(5));
    expect(document.activeElement).toBe(screen.getByRole('spinbutton', { name: 'Unfinished uploads per user (uploads)' }));
  });
});
