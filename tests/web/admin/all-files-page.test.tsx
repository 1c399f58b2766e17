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

const file = (n: number) => ({
  url: `http://files.test/f${n}.png`,
  actual_name: `f${n}.png`,
  original_name: `holiday-${n}.png`,
  username: 'bob',
  size: 2048,
  time_created: 1_700_000_000,
  width: 10,
  height: 10,
  mime_type: 'image/png',
  previews: [],
});

describe('admin all files screen', () => {
  it('asks for 6 per page with the three filters and pages through the total', async () => {
    const server = fakeServer({
      '/api/v1/admin/get/uploaded': (body) => {
        const page = Number(body.page);
        return { success: true, files: [file(page * 10 + 1)], totalImages: 20 };
      },
    });
    api.impl = server.impl as typeof api.impl;
    renderAdmin('/admin/uploaded', { username: 'root', role: 'admin' });
    expect(await screen.findByText('holiday-11.png')).toBeInTheDocument();
    expect(server.calls[0]?.body).toMatchObject({ page: 1, pageSize: 6, filters: { username: '', originalName: '', actualName: '' } });

    await userEvent.type(screen.getByRole('searchbox', { name: 'Username' }), 'bo');
    await userEvent.type(screen.getByRole('searchbox', { name: 'Original name' }), 'hol');
    await userEvent.type(screen.getByRole('searchbox', { name: 'Actual name' }), 'f1');
    await waitFor(() =>
      expect(server.calls.at(-1)?.body).toMatchObject({ page: 1, filters: { username: 'bo', originalName: 'hol', actualName: 'f1' } }),
    );
    // 20 files at 6 per page are 4 pages.
    await userEvent.click(screen.getByRole('button', { name: /^(page )?4$/i }));
    expect(await screen.findByText('holiday-41.png')).toBeInTheDocument();
  });

  it('deletes a file by its url after a confirmation', async () => {
    const server = fakeServer({
      '/api/v1/admin/get/uploaded': () => ({ success: true, files: [file(1)], totalImages: 1 }),
      '/api/v1/admin/update/delete': () => ({ success: true }),
    });
    api.impl = server.impl as typeof api.impl;
    renderAdmin('/admin/uploaded', { username: 'm', role: 'mod' });
    await userEvent.click(await screen.findByRole('button', { name: 'Delete holiday-1.png' }));
    const dialog = await screen.findByRole('alertdialog');
    expect(dialog).toHaveTextContent('Delete holiday-1.png');
    await userEvent.click(within(dialog).getByRole('button', { name: 'Delete' }));
    await waitFor(() =>
      expect(server.calls.find((c) => c.path === '/api/v1/admin/update/delete')?.body).toEqual({ filePath: 'http://files.test/f1.png' }),
    );
  });
});

describe('admin all files keyboard focus', () => {
  it('puts focus on the heading once the deleted row is gone, not on nothing', async () => {
    let files = [file(1), file(2)];
    const server = fakeServer({
      '/api/v1/admin/get/uploaded': () => ({ success: true, files, totalImages: files.length }),
      '/api/v1/admin/update/delete': (body) => {
        files = files.filter((f) => f.url !== body.filePath);
        return { success: true };
      },
    });
    api.impl = server.impl as typeof api.impl;
    renderAdmin('/admin/uploaded', { username: 'root', role: 'admin' });
    const user = userEvent.setup();
    await user.click(await screen.findByRole('button', { name: 'Delete holiday-2.png' }));
    await user.keyboard('{Tab}{Enter}');
    await waitFor(() => expect(screen.queryByText('holiday-2.png')).toBeNull());
    await waitFor(() => expect(document.activeElement).toBe(screen.getByRole('heading', { name: 'All files' })), { timeout: 3_000 });
  });
});
