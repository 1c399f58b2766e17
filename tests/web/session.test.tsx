import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { act, screen, waitFor } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { ApiError } from '../../src/lib/api-client.ts';
import { notifySuccess } from '../../src/lib/notify.ts';
import { routeCalls, serverError } from './helpers/api-mock.ts';
import { renderApp } from './helpers/render-app.tsx';

const apiCall = vi.hoisted(() => vi.fn());
vi.mock('../../src/lib/api-client.ts', async (orig) => ({ ...(await orig<object>()), call: apiCall }));

const signedInPages = {
  '/api/v1/utils/filesize': () => ({ success: true, maxFileSize: 1024 }),
};

beforeEach(() => localStorage.clear());
afterEach(() => apiCall.mockReset());

describe('session rules (spec §4)', () => {
  it('sends a visitor without a token from a signed-in page to /login', async () => {
    routeCalls(apiCall, signedInPages);
    const { router } = renderApp('/dashboard');
    await waitFor(() => expect(router.state.location.pathname).toBe('/login'));
    expect(apiCall).not.toHaveBeenCalledWith('/api/v1/auth/data', expect.anything());
  });

  it('shows the signed-in area when auth/data succeeds', async () => {
    localStorage.setItem('token', 'good');
    routeCalls(apiCall, {
      ...signedInPages,
      '/api/v1/auth/data': () => ({ success: true, user: { _id: '1', username: 'ada', role: 'default' }, maintenance: false }),
    });
    renderApp('/dashboard');
    expect(await screen.findByRole('heading', { name: 'File Uploader' })).toBeInTheDocument();
    expect(localStorage.getItem('token')).toBe('good');
  });

  it('removes the token and goes to /login when auth/data says success: false', async () => {
    localStorage.setItem('token', 'revoked');
    routeCalls(apiCall, {
      ...signedInPages,
      '/api/v1/auth/data': () => {
        throw serverError(401, 'Invalid or expired session');
      },
    });
    const { router } = renderApp('/dashboard');
    await waitFor(() => expect(router.state.location.pathname).toBe('/login'));
    expect(localStorage.getItem('token')).toBeNull();
    expect(await screen.findByRole('heading', { name: 'Login' })).toBeInTheDocument();
  });

  it('does the same on a timeout (ECONNABORTED)', async () => {
    localStorage.setItem('token', 'slow');
    routeCalls(apiCall, {
      ...signedInPages,
      '/api/v1/auth/data': () => {
        throw new ApiError('timeout of 10000ms exceeded', { status: 0, code: 'ECONNABORTED', fromServer: false });
      },
    });
    const { router } = renderApp('/settings');
    await waitFor(() => expect(router.state.location.pathname).toBe('/login'));
    expect(localStorage.getItem('token')).toBeNull();
  });

  it.each([
    ['a network error', new ApiError('Network Error', { status: 0, code: 'ERR_NETWORK', fromServer: false })],
    ['a server failure', new ApiError('Request failed with status code 502', { status: 502, code: 'ERR_BAD_RESPONSE', fromServer: false })],
  ])('does not act on %s: the token stays and so does the user', async (_name, error) => {
    localStorage.setItem('token', 'keep');
    routeCalls(apiCall, {
      ...signedInPages,
      '/api/v1/auth/data': () => {
        throw error;
      },
    });
    const { router } = renderApp('/dashboard');
    expect(await screen.findByRole('heading', { name: 'File Uploader' })).toBeInTheDocument();
    expect(router.state.location.pathname).toBe('/dashboard');
    expect(localStorage.getItem('token')).toBe('keep');
  });

  it('sends a user with a valid stored token from /login to /dashboard (spec §2)', async () => {
    localStorage.setItem('token', 'good');
    routeCalls(apiCall, {
      ...signedInPages,
      '/api/v1/auth/data': () => ({ success: true, user: { _id: '1', username: 'ada', role: 'trusted' }, maintenance: false }),
    });
    const { router } = renderApp('/login');
    await waitFor(() => expect(router.state.location.pathname).toBe('/dashboard'));
  });

  it('/logout clears the token, revokes it best-effort and goes home', async () => {
    localStorage.setItem('token', 'bye');
    routeCalls(apiCall, {
      '/api/v1/auth/data': () => ({ success: true, user: { _id: '1', username: 'ada', role: 'default' }, maintenance: false }),
      '/api/v1/auth/logout': () => {
        throw new ApiError('Network Error', { status: 0, fromServer: false });
      },
    });
    const { router } = renderApp('/logout');
    await waitFor(() => expect(router.state.location.pathname).toBe('/'));
    expect(localStorage.getItem('token')).toBeNull();
    expect(apiCall).toHaveBeenCalledWith('/api/v1/auth/logout', { token: 'bye' });
  });

  it('takes the last account’s toasts down with it', async () => {
    localStorage.setItem('token', 'bye');
    routeCalls(apiCall, {
      ...signedInPages,
      '/api/v1/auth/data': () => ({ success: true, user: { _id: '1', username: 'ada', role: 'default' }, maintenance: false }),
      '/api/v1/auth/logout': () => ({ success: true }),
    });
    const { router } = renderApp('/dashboard');
    expect(await screen.findByRole('heading', { name: 'File Uploader' })).toBeInTheDocument();
    act(() => notifySuccess('Invite key ada-secret-key created'));
    expect(await screen.findByText('Invite key ada-secret-key created')).toBeInTheDocument();

    await act(async () => router.navigate('/logout'));
    await waitFor(() => expect(router.state.location.pathname).toBe('/'));
    // It would have stayed its 5 s (spec §9) over the landing page.
    expect(screen.queryByText('Invite key ada-secret-key created')).toBeNull();
  });
});

describe('a session check still on its way at sign-out', () => {
  it('is not taken as signed in once it answers: /login stays the login form', async () => {
    localStorage.setItem('token', 'tok');
    let checks = 0;
    let answerCheck: () => void = () => {};
    routeCalls(apiCall, {
      '/api/v1/auth/data': () => {
        const data = { success: true, user: { _id: '1', username: 'ada', role: 'default' }, maintenance: false };
        if (++checks === 1) return data;
        return new Promise((resolve) => (answerCheck = () => resolve(data)));
      },
      '/api/v1/auth/apikeys': () => ({ success: true, apiKeys: [] }),
      '/api/v1/utils/invites/invite-limit': () => ({ success: true, remainingInvites: 2, invitesAllowed: 3, resetsAt: 1_800_000_000 }),
      '/api/v1/utils/userstats': () => ({ success: true, stats: { totalFilesUploaded: 1, totalStorageUsed: 1 } }),
      '/api/v1/utils/changeuser': () => ({ success: true, message: 'Username updated' }),
      '/api/v1/auth/logout': () => ({ success: true }),
    });
    const { router } = renderApp('/settings');
    const user = userEvent.setup();
    await user.type(await screen.findByLabelText('New username'), 'grace');
    await user.click(screen.getByRole('button', { name: 'Update username' }));
    // The check after the change is slow; the user signs out meanwhile.
    await waitFor(() => expect(checks).toBe(2));
    await act(async () => router.navigate('/logout'));
    await waitFor(() => expect(router.state.location.pathname).toBe('/'));
    expect(localStorage.getItem('token')).toBeNull();
    await act(async () => answerCheck());
    await act(async () => router.navigate('/login'));
    expect(await screen.findByRole('heading', { name: 'Login' })).toBeInTheDocument();
    expect(router.state.location.pathname).toBe('/login');
  });
});
