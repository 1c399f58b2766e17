import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { act, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { routeCalls, type Handler } from './helpers/api-mock.ts';
import { renderApp } from './helpers/render-app.tsx';

const apiCall = vi.hoisted(() => vi.fn());
vi.mock('../../src/lib/api-client.ts', async (orig) => ({ ...(await orig<object>()), call: apiCall }));

const INVITES = [
  { _id: 'i1', inviteKey: 'KEY-ONE', createdBy: 'ada', claimed: true, claimedBy: 'bob', createdAt: 1_700_000_000 },
  { _id: 'i2', inviteKey: 'KEY-TWO', createdBy: 'ada', claimed: false, claimedBy: null, createdAt: 1_700_000_000 },
];

function handlers(over: Record<string, Handler> = {}): Record<string, Handler> {
  return {
    '/api/v1/auth/data': () => ({ success: true, user: { _id: '1', username: 'ada', role: 'default' }, maintenance: false }),
    '/api/v1/manage/invites': () => ({ success: true, invites: INVITES, totalPages: 3, total: 18 }),
    '/api/v1/manage/inviteremoval': () => ({ success: true }),
    ...over,
  };
}

beforeEach(() => localStorage.setItem('token', 'tok'));
afterEach(() => apiCall.mockReset());

describe('/invites (spec §2)', () => {
  it('lists own invites 8 per page with claimed state and filters', async () => {
    routeCalls(apiCall, handlers());
    renderApp('/invites');
    expect(await screen.findByText('KEY-ONE')).toBeInTheDocument();
    expect(apiCall).toHaveBeenCalledWith('/api/v1/manage/invites', { page: 1, limit: 8, filters: { claimedFilter: 'all', claimedBy: '' } });
    expect(screen.getByText('bob')).toBeInTheDocument();
    expect(within(screen.getByRole('table')).getByText('Unclaimed')).toBeInTheDocument();
    const user = userEvent.setup();
    await user.selectOptions(screen.getByLabelText('Status'), 'claimed');
    await user.type(screen.getByLabelText('Claimed by'), 'bo');
    await waitFor(() =>
      expect(apiCall).toHaveBeenCalledWith('/api/v1/manage/invites', { page: 1, limit: 8, filters: { claimedFilter: 'claimed', claimedBy: 'bo' } }),
    );
  });

  it('deletes an invite after confirmation', async () => {
    routeCalls(apiCall, handlers());
    renderApp('/invites');
    const user = userEvent.setup();
    await user.click(await screen.findByRole('button', { name: 'Delete invite KEY-TWO' }));
    await user.click(within(screen.getByRole('alertdialog')).getByRole('button', { name: 'Delete' }));
    expect(apiCall).toHaveBeenCalledWith('/api/v1/manage/inviteremoval', { inviteKeyId: 'i2' });
  });
});

describe('/invites claimed-by filter while answers arrive out of order', () => {
  it('keeps the invites of the newest filter when an older query answers after it', async () => {
    let answerOlder: (value: unknown) => void = () => {};
    const one = (key: string, by: string) => ({ _id: key, inviteKey: key, createdBy: 'ada', claimed: true, claimedBy: by, createdAt: 1_700_000_000 });
    routeCalls(
      apiCall,
      handlers({
        '/api/v1/manage/invites': (body) => {
          const by = (body.filters as { claimedBy: string }).claimedBy;
          // The query for "b" is slow; the one for "bob" answers at once.
          if (by === 'b') return new Promise((resolve) => (answerOlder = resolve));
          if (by === 'bob') return { success: true, invites: [one('KEY-BOB', 'bob')], totalPages: 1, total: 1 };
          return { success: true, invites: INVITES, totalPages: 3, total: 18 };
        },
      }),
    );
    renderApp('/invites');
    const user = userEvent.setup();
    await screen.findByText('KEY-ONE');
    const input = screen.getByLabelText('Claimed by');
    await user.type(input, 'b');
    await waitFor(() => expect(apiCall).toHaveBeenCalledWith('/api/v1/manage/invites', expect.objectContaining({ filters: { claimedFilter: 'all', claimedBy: 'b' } })));
    await user.type(input, 'ob');
    expect(await screen.findByText('KEY-BOB')).toBeInTheDocument();
    await act(async () => answerOlder({ success: true, invites: [one('KEY-BEA', 'bea')], totalPages: 1, total: 1 }));
    expect(screen.queryByText('KEY-BEA')).toBeNull();
    expect(screen.getByText('KEY-BOB')).toBeInTheDocument();
  });
});

describe('/invites after a delete empties the last page', () => {
  it('goes back to the last page that has invites when the list shrank elsewhere too', async () => {
    const key = (n: number) => ({ _id: `i${n}`, inviteKey: `KEY-${n}`, createdBy: 'ada', claimed: false, claimedBy: null, createdAt: 1_700_000_000 });
    let invites = Array.from({ length: 10 }, (_, i) => key(i + 1));
    routeCalls(
      apiCall,
      handlers({
        '/api/v1/manage/invites': (body) => {
          const page = Number(body.page);
          return { success: true, invites: invites.slice((page - 1) * 8, page * 8), totalPages: Math.ceil(invites.length / 8), total: invites.length };
        },
        '/api/v1/manage/inviteremoval': (body) => {
          invites = invites.filter((i) => i._id !== body.inviteKeyId);
          return { success: true };
        },
      }),
    );
    renderApp('/invites');
    const user = userEvent.setup();
    await user.click(await screen.findByRole('button', { name: 'Page 2' }));
    await screen.findByText('KEY-10');
    // KEY-9 is deleted on another device before this one deletes KEY-10.
    invites = invites.filter((i) => i._id !== 'i9');
    await user.click(screen.getByRole('button', { name: 'Delete invite KEY-10' }));
    await user.click(within(screen.getByRole('alertdialog')).getByRole('button', { name: 'Delete' }));
    expect(await screen.findByText('KEY-1', {}, { timeout: 5_000 })).toBeInTheDocument();
    expect(screen.queryByText('No invites found.')).toBeNull();
  });
});

describe('/invites keyboard focus after a delete', () => {
  it('puts focus on the heading once the deleted row is gone, not on nothing', async () => {
    let invites = [...INVITES];
    routeCalls(
      apiCall,
      handlers({
        '/api/v1/manage/invites': () => ({ success: true, invites, totalPages: 1, total: invites.length }),
        '/api/v1/manage/inviteremoval': (body) => {
          invites = invites.filter((i) => i._id !== body.inviteKeyId);
          return { success: true };
        },
      }),
    );
    renderApp('/invites');
    const user = userEvent.setup();
    await user.click(await screen.findByRole('button', { name: 'Delete invite KEY-TWO' }));
    await user.keyboard('{Tab}{Enter}');
    await waitFor(() => expect(screen.queryByText('KEY-TWO')).toBeNull());
    await waitFor(() => expect(document.activeElement).toBe(screen.getByRole('heading', { name: 'Invites Given' })), { timeout: 3_000 });
  });
});
