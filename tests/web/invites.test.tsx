import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { screen, waitFor, within } from '@testing-library/react';
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
