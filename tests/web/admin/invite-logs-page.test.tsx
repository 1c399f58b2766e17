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
const invites = [
  { _id: 'i1', inviteKey: 'KEY-ONE', createdBy: 'root', claimed: true, claimedBy: 'bob', createdAt: 1_700_000_000 },
  { _id: 'i2', inviteKey: 'KEY-TWO', createdBy: 'root', claimed: false, claimedBy: null, createdAt: 1_700_000_000 },
];

function serve() {
  const server = fakeServer({
    '/api/v1/admin/get/invitelogs': () => ({ success: true, invites, totalPages: 1, total: invites.length }),
    '/api/v1/admin/create/invites': (b) => ({ success: true, inviteKeys: Array.from({ length: Number(b.count) }, (_, i) => `NEW-${i}`) }),
    '/api/v1/admin/set/inviteremove': () => ({ success: true }),
  });
  api.impl = server.impl as typeof api.impl;
  return server;
}

describe('admin invite logs screen', () => {
  it('sends the four filters with 8 per page', async () => {
    const server = serve();
    renderAdmin('/admin/invitelogs', ADMIN);
    await screen.findByText('KEY-ONE');
    expect(server.calls[0]?.body).toEqual({
      page: 1,
      limit: 8,
      filters: { inviteKey: '', createdBy: '', claimedBy: '', claimedFilter: 'all' },
    });
    await userEvent.type(screen.getByRole('searchbox', { name: 'Invite key' }), 'KEY');
    await userEvent.type(screen.getByRole('searchbox', { name: 'Created by' }), 'ro');
    await userEvent.type(screen.getByRole('searchbox', { name: 'Claimed by' }), 'bo');
    await userEvent.selectOptions(screen.getByRole('combobox', { name: 'State' }), 'unclaimed');
    await waitFor(() =>
      expect(server.calls.at(-1)?.body).toMatchObject({
        filters: { inviteKey: 'KEY', createdBy: 'ro', claimedBy: 'bo', claimedFilter: 'unclaimed' },
      }),
    );
  });

  it('creates at least one key and shows the new keys', async () => {
    const server = serve();
    renderAdmin('/admin/invitelogs', ADMIN);
    const count = await screen.findByRole('spinbutton', { name: 'Number of invite keys' });
    expect(count).toHaveAttribute('min', '1');
    await userEvent.clear(count);
    await userEvent.type(count, '0');
    await userEvent.click(screen.getByRole('button', { name: 'Create' }));
    expect(screen.getByRole('alert')).toHaveTextContent('Enter a whole number from 1 to 100.');
    expect(server.calls.some((c) => c.path === '/api/v1/admin/create/invites')).toBe(false);

    await userEvent.clear(count);
    await userEvent.type(count, '3');
    await userEvent.click(screen.getByRole('button', { name: 'Create' }));
    const list = await screen.findByRole('list', { name: 'New invite keys' });
    expect(within(list).getAllByRole('listitem').map((li) => li.querySelector('code')?.textContent)).toEqual(['NEW-0', 'NEW-1', 'NEW-2']);
    // Issue 11 item 11: each new key comes with Copy, Share and the link that fills in /register.
    const first = within(list).getAllByRole('listitem')[0]!;
    expect(within(first).getByRole('button', { name: 'Copy' })).toBeInTheDocument();
    expect(within(first).getByRole('button', { name: 'Share invite NEW-0' })).toBeInTheDocument();
    expect(within(first).getByRole('link')).toHaveAttribute('href', `${window.location.origin}/register?invite=NEW-0`);
    expect(server.calls.find((c) => c.path === '/api/v1/admin/create/invites')?.body).toEqual({ count: 3 });
  });

  it('removes an invite by its id after a confirmation', async () => {
    const server = serve();
    renderAdmin('/admin/invitelogs', ADMIN);
    await userEvent.click(await screen.findByRole('button', { name: 'Remove invite KEY-TWO' }));
    const dialog = await screen.findByRole('alertdialog');
    expect(dialog).toHaveTextContent('Remove the invite key KEY-TWO?');
    await userEvent.click(within(dialog).getByRole('button', { name: 'Remove' }));
    await waitFor(() =>
      expect(server.calls.find((c) => c.path === '/api/v1/admin/set/inviteremove')?.body).toEqual({ inviteKeyId: 'i2' }),
    );
  });
});

describe('admin invite logs keyboard focus', () => {
  it('puts focus on the heading once the removed row is gone, not on nothing', async () => {
    let rows = [...invites];
    const server = fakeServer({
      '/api/v1/admin/get/invitelogs': () => ({ success: true, invites: rows, totalPages: 1, total: rows.length }),
      '/api/v1/admin/set/inviteremove': (body) => {
        rows = rows.filter((i) => i._id !== body.inviteKeyId);
        return { success: true };
      },
    });
    api.impl = server.impl as typeof api.impl;
    renderAdmin('/admin/invitelogs', ADMIN);
    const user = userEvent.setup();
    await user.click(await screen.findByRole('button', { name: 'Remove invite KEY-TWO' }));
    await user.keyboard('{Tab}{Enter}');
    await waitFor(() => expect(screen.queryByText('KEY-TWO')).toBeNull());
    await waitFor(() => expect(document.activeElement).toBe(screen.getByRole('heading', { name: 'Invite Logs' })), { timeout: 3_000 });
  });
});
