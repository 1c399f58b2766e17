import { describe, expect, it, vi, beforeEach } from 'vitest';
import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { notifyError, notifySuccess } from '../../../src/lib/notify.ts';
import { BAN_FAILURE } from '../../../src/features/admin/user-actions.tsx';
import { fakeServer, refusal } from './api-mock.ts';
import { renderAdmin } from './render-admin.tsx';

const api = vi.hoisted(() => ({ impl: (..._args: unknown[]): Promise<unknown> => Promise.reject(new Error('no fake set')) }));
vi.mock('../../../src/lib/api-client.ts', async (importOriginal) => ({
  ...(await importOriginal<Record<string, unknown>>()),
  call: (...args: unknown[]) => api.impl(...args),
}));
vi.mock('../../../src/lib/notify.ts', () => ({ notifySuccess: vi.fn(), notifyError: vi.fn() }));

const ADMIN = { username: 'root', role: 'admin' as const };
const users = [
  { _id: 'u1', username: 'root', role: 'admin', banned: false, time_created: 1_700_000_000 },
  { _id: 'u2', username: 'bob', role: 'default', banned: false, time_created: 1_700_000_100 },
  { _id: 'u3', username: 'eve', role: 'trusted', banned: true, time_created: 1_700_000_200 },
];

function serve(extra: Record<string, (body: Record<string, unknown>) => unknown> = {}) {
  const server = fakeServer({
    '/api/v1/admin/get/users': () => ({ success: true, users, totalPages: 1, totalUsers: users.length }),
    ...extra,
  });
  api.impl = server.impl as typeof api.impl;
  return server;
}

beforeEach(() => vi.mocked(notifyError).mockClear());

describe('admin users screen', () => {
  it('offers default, trusted and mod in the role dropdown, never admin', async () => {
    serve();
    renderAdmin('/admin/users', ADMIN);
    const select = await screen.findByRole('combobox', { name: 'Role of bob' });
    const options = within(select).getAllByRole('option').map((o) => o.getAttribute('value'));
    expect(options).toEqual(['default', 'trusted', 'mod']);
    // The admin's own row has no dropdown at all.
    expect(screen.queryByRole('combobox', { name: 'Role of root' })).toBeNull();
  });

  it('changes a role through admin/update/role', async () => {
    const server = serve({ '/api/v1/admin/update/role': () => ({ success: true }) });
    renderAdmin('/admin/users', ADMIN);
    await userEvent.selectOptions(await screen.findByRole('combobox', { name: 'Role of bob' }), 'mod');
    // Issue 11 item 11: nothing changes until the admin confirms.
    const dialog = await screen.findByRole('alertdialog');
    expect(dialog).toHaveTextContent('Change the role of bob from default to mod?');
    expect(server.calls.some((c) => c.path === '/api/v1/admin/update/role')).toBe(false);
    await userEvent.click(within(dialog).getByRole('button', { name: 'Make mod' }));
    await waitFor(() => expect(server.calls.some((c) => c.path === '/api/v1/admin/update/role')).toBe(true));
    expect(server.calls.find((c) => c.path === '/api/v1/admin/update/role')?.body).toEqual({ userId: 'u2', newRole: 'mod' });
  });

  it('asks to ban an active user and to unban a banned one, and only calls after yes', async () => {
    const server = serve({ '/api/v1/admin/set/ban': () => ({ success: true, banned: true }) });
    renderAdmin('/admin/users', ADMIN);

    await userEvent.click(await screen.findByRole('button', { name: 'Unban eve' }));
    let dialog = await screen.findByRole('alertdialog');
    expect(dialog).toHaveTextContent('Are you sure you want to unban eve?');
    await userEvent.click(within(dialog).getByRole('button', { name: 'Cancel' }));
    expect(server.calls.some((c) => c.path === '/api/v1/admin/set/ban')).toBe(false);

    await userEvent.click(screen.getByRole('button', { name: 'Ban bob' }));
    dialog = await screen.findByRole('alertdialog');
    expect(dialog).toHaveTextContent('Are you sure you want to ban bob?');
    await userEvent.click(within(dialog).getByRole('button', { name: 'Ban' }));
    await waitFor(() => expect(server.calls.filter((c) => c.path === '/api/v1/admin/set/ban')).toHaveLength(1));
    expect(server.calls.find((c) => c.path === '/api/v1/admin/set/ban')?.body).toEqual({ userId: 'u2' });
  });

  it('offers no second Ban while the first is answered and the row not yet read again, since a second would undo it', async () => {
    // admin/set/ban toggles (contract adminSetBan): a second "ban" on a slow connection unbanned.
    let answer!: () => void;
    let bobBanned = false;
    const server = serve({
      '/api/v1/admin/get/users': () => ({ success: true, users: users.map((u) => (u._id === 'u2' ? { ...u, banned: bobBanned } : u)), totalPages: 1, totalUsers: users.length }),
      '/api/v1/admin/set/ban': () =>
        new Promise((resolve) => (answer = () => {
          bobBanned = !bobBanned;
          resolve({ success: true, banned: bobBanned });
        })),
    });
    renderAdmin('/admin/users', ADMIN);
    const ban = await screen.findByRole('button', { name: 'Ban bob' });
    await userEvent.click(ban);
    await userEvent.click(within(await screen.findByRole('alertdialog')).getByRole('button', { name: 'Ban' }));
    await waitFor(() => expect(server.calls.filter((c) => c.path === '/api/v1/admin/set/ban')).toHaveLength(1));
    await waitFor(() => expect(ban).toBeDisabled());
    await userEvent.click(ban);
    expect(screen.queryByRole('alertdialog')).toBeNull();
    answer();
    expect(await screen.findByRole('button', { name: 'Unban bob' })).toBeEnabled();
    expect(server.calls.filter((c) => c.path === '/api/v1/admin/set/ban')).toHaveLength(1);
  });

  it('shows the spec §8 text when a ban fails without an explanation', async () => {
    serve({
      '/api/v1/admin/set/ban': () => {
        throw refusal(500, 'Request failed with status code 500', false);
      },
    });
    renderAdmin('/admin/users', ADMIN);
    await userEvent.click(await screen.findByRole('button', { name: 'Ban bob' }));
    await userEvent.click(within(await screen.findByRole('alertdialog')).getByRole('button', { name: 'Ban' }));
    await waitFor(() => expect(notifyError).toHaveBeenCalledWith(BAN_FAILURE));
    expect(BAN_FAILURE).toBe('An internal error has occurred. Please create a support ticket for assistance.');
  });

  it('shows a deletion under way on its row, offers nothing more there meanwhile and asks the server once', async () => {
    // A large account is answered for after up to 10 s (server users/account-removals.ts).
    let answer!: () => void;
    const server = serve({ '/api/v1/admin/set/remove': () => new Promise((resolve) => (answer = () => resolve({ success: true }))) });
    renderAdmin('/admin/users', ADMIN);
    await userEvent.click(await screen.findByRole('button', { name: 'Delete bob' }));
    await userEvent.click(within(await screen.findByRole('alertdialog')).getByRole('button', { name: 'Delete' }));
    const remove = screen.getByRole('button', { name: 'Delete bob' });
    await waitFor(() => expect(remove).toBeDisabled());
    expect(remove).toHaveTextContent('Deleting…');
    for (const name of ['Ban bob', 'Rename bob', 'Reset password of bob', 'Actions for bob']) expect(screen.getByRole('button', { name })).toBeDisabled();
    expect(screen.getByRole('button', { name: 'Delete eve' })).toBeEnabled();
    await userEvent.click(remove);
    expect(server.calls.filter((c) => c.path === '/api/v1/admin/set/remove')).toHaveLength(1);

    answer();
    await waitFor(() => expect(notifySuccess).toHaveBeenCalledWith('bob has been deleted.'));
    // The list is asked again; this fake still lists bob, whose row offers its actions again.
    await waitFor(() => expect(screen.getByRole('button', { name: 'Delete bob' })).toBeEnabled());
    expect(server.calls.filter((c) => c.path === '/api/v1/admin/get/users').length).toBeGreaterThan(1);
  });

  it("puts focus on the heading once a deleted account's row is gone, not on nothing", async () => {
    let rows = [...users];
    serve({
      '/api/v1/admin/get/users': () => ({ success: true, users: rows, totalPages: 1, totalUsers: rows.length }),
      '/api/v1/admin/set/remove': (body) => {
        rows = rows.filter((u) => u._id !== body.userId);
        return { success: true };
      },
    });
    renderAdmin('/admin/users', ADMIN);
    const user = userEvent.setup();
    await user.click(await screen.findByRole('button', { name: 'Delete bob' }));
    await user.keyboard('{Tab}{Enter}');
    await waitFor(() => expect(screen.queryByRole('button', { name: 'Delete bob' })).toBeNull());
    await waitFor(() => expect(document.activeElement).toBe(screen.getByRole('heading', { name: 'Users' })), { timeout: 3_000 });
  });

  it('puts focus in the rename field when Rename is picked from the phone action sheet', async () => {
    serve();
    renderAdmin('/admin/users', ADMIN);
    const user = userEvent.setup();
    await user.click(await screen.findByRole('button', { name: 'Actions for bob' }));
    await user.click(within(await screen.findByRole('dialog', { name: 'bob' })).getByRole('button', { name: 'Rename' }));
    const field = await screen.findByLabelText('New username for bob');
    // The sheet gave focus back to "Actions" as it closed; the field took it from there.
    await waitFor(() => expect(screen.queryByRole('dialog', { name: 'bob' })).toBeNull());
    expect(document.activeElement).toBe(field);
  });

  it('gives focus back to the Rename or Reset password button that opened the form once it closes', async () => {
    serve({ '/api/v1/admin/update/userpass': () => ({ success: true }) });
    renderAdmin('/admin/users', ADMIN);
    const user = userEvent.setup();
    const rename = await screen.findByRole('button', { name: 'Rename bob' });
    await user.click(rename);
    await waitFor(() => expect(screen.getByLabelText('New username for bob')).toHaveFocus());
    await user.click(within(screen.getByRole('form', { name: 'Rename bob' })).getByRole('button', { name: 'Cancel' }));
    expect(screen.queryByRole('form', { name: 'Rename bob' })).toBeNull();
    await waitFor(() => expect(rename).toHaveFocus());

    const reset = screen.getByRole('button', { name: 'Reset password of bob' });
    await user.click(reset);
    await waitFor(() => expect(screen.getByLabelText('New password for bob')).toHaveFocus());
    await user.keyboard('correct horse battery{Enter}');
    await waitFor(() => expect(screen.queryByRole('form', { name: 'Reset password of bob' })).toBeNull());
    await waitFor(() => expect(reset).toHaveFocus());
  });

  it('sends the filters, 8 per page, and starts again at page 1 when one changes', async () => {
    const server = serve();
    renderAdmin('/admin/users', ADMIN);
    await screen.findByRole('combobox', { name: 'Role of bob' });
    expect(server.calls[0]?.body).toEqual({
      page: 1,
      limit: 8,
      query: '',
      sortBy: 'time_created_desc',
      roleFilter: '',
      showBannedOnly: false,
    });
    await userEvent.selectOptions(screen.getByRole('combobox', { name: 'Role' }), 'trusted');
    await userEvent.click(screen.getByRole('checkbox', { name: 'Banned only' }));
    await userEvent.selectOptions(screen.getByRole('combobox', { name: 'Sort' }), 'role');
    await waitFor(() =>
      expect(server.calls.at(-1)?.body).toMatchObject({ page: 1, roleFilter: 'trusted', showBannedOnly: true, sortBy: 'role' }),
    );
  });

  it('renames a user, refusing a name the server would refuse before asking it', async () => {
    const server = serve({ '/api/v1/admin/update/username': () => ({ success: true }) });
    renderAdmin('/admin/users', ADMIN);
    await userEvent.click(await screen.findByRole('button', { name: 'Rename bob' }));
    const input = screen.getByLabelText('New username for bob');
    await userEvent.type(input, 'x!');
    await userEvent.click(screen.getByRole('button', { name: 'Rename' }));
    expect(screen.getByRole('alert')).toHaveTextContent('Usernames are 3 to 32 letters');
    expect(server.calls.some((c) => c.path === '/api/v1/admin/update/username')).toBe(false);
    await userEvent.clear(input);
    await userEvent.type(input, 'robert');
    await userEvent.click(screen.getByRole('button', { name: 'Rename' }));
    await waitFor(() =>
      expect(server.calls.find((c) => c.path === '/api/v1/admin/update/username')?.body).toEqual({ targetUserId: 'u2', newUsername: 'robert' }),
    );
  });
});

describe('admin users screen with no answer', () => {
  it('says the server cannot be reached and fills in by itself once it answers', async () => {
    let failures = 1;
    const server = serve({
      '/api/v1/admin/get/users': () => {
        if (failures-- > 0) throw refusal(0, 'Network Error', false);
        return { success: true, users, totalPages: 1, totalUsers: users.length };
      },
    });
    renderAdmin('/admin/users', ADMIN);
    expect(await screen.findByText(/The server cannot be reached right now\. This page will load by itself/)).toBeInTheDocument();
    expect(screen.queryByText(/internal error|^Error:/)).toBeNull();
    expect(await screen.findByRole('combobox', { name: 'Role of bob' })).toBeInTheDocument();
    expect(screen.queryByText(/cannot be reached/)).toBeNull();
    expect(server.calls.filter((c) => c.path === '/api/v1/admin/get/users')).toHaveLength(2);
  });

  it('shows a refusal with the server words and does not ask again by itself', async () => {
    vi.useFakeTimers({ shouldAdvanceTime: true });
    try {
      const server = serve({ '/api/v1/admin/get/users': () => { throw refusal(500, 'The database is not answering'); } });
      renderAdmin('/admin/users', ADMIN);
      expect(await screen.findByText('Error: The database is not answering')).toBeInTheDocument();
      await vi.advanceTimersByTimeAsync(120_000);
      expect(server.calls.filter((c) => c.path === '/api/v1/admin/get/users')).toHaveLength(1);
    } finally {
      vi.useRealTimers();
    }
  });
});
