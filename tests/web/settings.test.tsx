import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { act, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { buildSharexConfig } from '../../src/features/settings/sharex.ts';
import { ApiError } from '../../src/lib/api-client.ts';
import { routeCalls, serverError, type Handler } from './helpers/api-mock.ts';
import { renderApp } from './helpers/render-app.tsx';

const apiCall = vi.hoisted(() => vi.fn());
vi.mock('../../src/lib/api-client.ts', async (orig) => ({ ...(await orig<object>()), call: apiCall }));

function settingsHandlers(over: Record<string, Handler> = {}): Record<string, Handler> {
  return {
    '/api/v1/auth/data': () => ({ success: true, user: { _id: '1', username: 'ada', role: 'default' }, maintenance: false }),
    '/api/v1/auth/apikeys': () => ({ success: true, apiKeys: [] }),
    '/api/v1/utils/invites/invite-limit': () => ({ success: true, remainingInvites: 2, invitesAllowed: 3, resetsAt: 1_800_000_000 }),
    '/api/v1/utils/userstats': () => ({ success: true, stats: { totalFilesUploaded: 1234, totalStorageUsed: 2_147_483_648 } }),
    ...over,
  };
}

beforeEach(() => localStorage.setItem('token', 'tok'));
afterEach(() => {
  apiCall.mockReset();
  vi.restoreAllMocks();
});

describe('ShareX configuration (issue 4)', () => {
  it('builds the .sxcu fields', () => {
    expect(buildSharexConfig('https://api.example/', 'sk_123', 'Stash')).toEqual({
      Version: expect.any(String),
      Name: 'Stash',
      DestinationType: 'ImageUploader, FileUploader, TextUploader',
      RequestMethod: 'POST',
      RequestURL: 'https://api.example/api/v1/files/upload',
      Headers: { Authorization: 'Bearer sk_123' },
      Body: 'MultipartFormData',
      FileFormName: 'file',
      URL: '{json:url}',
      ErrorMessage: '{json:error}',
    });
  });

  it("refuses the download without a key: 'Please generate an API key first.'", async () => {
    routeCalls(apiCall, settingsHandlers());
    const createObjectURL = vi.fn(() => 'blob:x');
    URL.createObjectURL = createObjectURL;
    renderApp('/settings');
    await userEvent.setup().click(await screen.findByRole('button', { name: 'Download ShareX config' }));
    expect(await screen.findByText('Please generate an API key first.')).toBeInTheDocument();
    expect(createObjectURL).not.toHaveBeenCalled();
  });

  it('does not tell a user whose keys have not loaded to generate one', async () => {
    routeCalls(apiCall, settingsHandlers({ '/api/v1/auth/apikeys': () => { throw serverError(500, 'The database is not answering'); } }));
    renderApp('/settings');
    expect(await screen.findByText('Error: The database is not answering')).toBeInTheDocument();
    const download = screen.getByRole('button', { name: 'Download ShareX config' });
    // Unread, the keys may well exist: 'Please generate an API key first.' would be a guess.
    expect(download).toBeDisabled();
  });

  it('downloads a .sxcu file carrying the key once one exists', async () => {
    routeCalls(apiCall, settingsHandlers({ '/api/v1/auth/apikeys': () => ({ success: true, apiKeys: [{ _id: 'k1', key: 'sk_live_abcdefghijkl', createdAt: 1_796_000_000 }] }) }));
    let saved: Blob | undefined;
    URL.createObjectURL = vi.fn((b: Blob) => {
      saved = b;
      return 'blob:sxcu';
    }) as typeof URL.createObjectURL;
    URL.revokeObjectURL = vi.fn();
    let downloadName = '';
    vi.spyOn(HTMLAnchorElement.prototype, 'click').mockImplementation(function (this: HTMLAnchorElement) {
      downloadName = this.download;
    });
    renderApp('/settings', { apiUrl: 'https://api.example' });
    await screen.findByText('sk_live_…ijkl');
    await userEvent.setup().click(screen.getByRole('button', { name: 'Download ShareX config' }));
    expect(downloadName).toBe('Stash.sxcu');
    const json = JSON.parse(await saved!.text());
    expect(json.RequestURL).toBe('https://api.example/api/v1/files/upload');
    expect(json.Headers).toEqual({ Authorization: 'Bearer sk_live_abcdefghijkl' });
  });

  it('generates a key and lists it', async () => {
    const keys: { _id: string; key: string; createdAt: number }[] = [];
    routeCalls(
      apiCall,
      settingsHandlers({
        '/api/v1/auth/apikeys': () => ({ success: true, apiKeys: [...keys] }),
        '/api/v1/auth/apikeys/generate': () => {
          keys.push({ _id: 'n1', key: 'sk_new_0123456789', createdAt: 1_796_000_000 });
          return { success: true, apiKey: keys[0] };
        },
      }),
    );
    renderApp('/settings');
    expect(await screen.findByText('You have no API keys.')).toBeInTheDocument();
    await userEvent.setup().click(screen.getByRole('button', { name: 'Generate API key' }));
    expect(await screen.findByText('sk_new_0…6789')).toBeInTheDocument();
  });

  it('shows each key in a box of its own, named and dated, with its own Revoke', async () => {
    const keys = [
      { _id: 'k1', key: 'sk_live_aaaaaaaa1111', createdAt: Date.UTC(2026, 10, 30, 12) / 1000 },
      { _id: 'k2', key: 'sk_live_bbbbbbbb2222', createdAt: Date.UTC(2026, 11, 4, 12) / 1000 },
    ];
    routeCalls(
      apiCall,
      settingsHandlers({
        '/api/v1/auth/apikeys': () => ({ success: true, apiKeys: [...keys] }),
        '/api/v1/auth/apikeys/revoke': () => ({ success: true }),
      }),
    );
    renderApp('/settings');
    const second = await screen.findByRole('listitem', { name: 'Key 2 sk_live_…2222 made 12-04-2026' });
    expect(screen.getByRole('listitem', { name: 'Key 1 sk_live_…1111 made 11-30-2026' })).toBeInTheDocument();
    await userEvent.setup().click(within(second).getByRole('button', { name: 'Revoke' }));
    expect(await screen.findByRole('alertdialog', { name: 'Revoke the API key sk_live_…2222? Tools using it will stop working.' })).toBeInTheDocument();
  });
});

describe('revoking an API key from the keyboard', () => {
  it('puts focus on the API keys heading once the revoked key is gone, not on nothing', async () => {
    let keys = [
      { _id: 'k1', key: 'sk_live_aaaaaaaa1111', createdAt: 1_796_000_000 },
      { _id: 'k2', key: 'sk_live_bbbbbbbb2222', createdAt: 1_796_000_000 },
    ];
    routeCalls(
      apiCall,
      settingsHandlers({
        '/api/v1/auth/apikeys': () => ({ success: true, apiKeys: [...keys] }),
        '/api/v1/auth/apikeys/revoke': (body) => {
          keys = keys.filter((k) => k._id !== body.apiKey);
          return { success: true };
        },
      }),
    );
    renderApp('/settings');
    const user = userEvent.setup();
    const second = await screen.findByRole('listitem', { name: /^Key 2 / });
    await user.click(within(second).getByRole('button', { name: 'Revoke' }));
    await user.keyboard('{Tab}{Enter}');
    await waitFor(() => expect(screen.queryByText('sk_live_…2222')).toBeNull());
    await waitFor(() => expect(document.activeElement).toBe(screen.getByRole('heading', { name: 'API keys' })), { timeout: 3_000 });
  });
});

describe('account forms (spec §5, §8)', () => {
  it("checks the new password against its confirmation: 'Passwords do not match'", async () => {
    routeCalls(apiCall, settingsHandlers());
    renderApp('/settings');
    const user = userEvent.setup();
    await user.type(await screen.findByLabelText('Current password'), 'old-password');
    await user.type(screen.getByLabelText('New password'), 'new-password-1');
    await user.type(screen.getByLabelText('Confirm new password'), 'new-password-2');
    await user.click(screen.getByRole('button', { name: 'Update password' }));
    expect(screen.getByText('Passwords do not match')).toBeInTheDocument();
    expect(apiCall).not.toHaveBeenCalledWith('/api/v1/utils/changepassword', expect.anything());
  });

  it("says 'Error updating password.' when the server refuses", async () => {
    routeCalls(apiCall, settingsHandlers({ '/api/v1/utils/changepassword': () => { throw serverError(401, 'Current password is wrong'); } }));
    renderApp('/settings');
    const user = userEvent.setup();
    await user.type(await screen.findByLabelText('Current password'), 'old-password');
    await user.type(screen.getByLabelText('New password'), 'new-password-1');
    await user.type(screen.getByLabelText('Confirm new password'), 'new-password-1');
    await user.click(screen.getByRole('button', { name: 'Update password' }));
    expect(await screen.findByText('Error updating password. Current password is wrong')).toBeInTheDocument();
  });

  it("says 'Error updating username.' when the change fails", async () => {
    routeCalls(apiCall, settingsHandlers({ '/api/v1/utils/changeuser': () => { throw new Error('boom'); } }));
    renderApp('/settings');
    const user = userEvent.setup();
    await user.type(await screen.findByLabelText('New username'), 'grace');
    await user.click(screen.getByRole('button', { name: 'Update username' }));
    expect(await screen.findByRole('alert')).toHaveTextContent(/^Error updating username\.$/);
  });

  it('says what a username and a new password must be before sending, not the API field names', async () => {
    routeCalls(apiCall, settingsHandlers());
    renderApp('/settings');
    const user = userEvent.setup();
    await user.type(await screen.findByLabelText('New username'), 'x!');
    await user.click(screen.getByRole('button', { name: 'Update username' }));
    expect(await screen.findByText('Error updating username. Usernames are 3 to 32 letters, digits, _, . or -.')).toBeInTheDocument();
    await user.type(screen.getByLabelText('Current password'), 'old-password');
    await user.type(screen.getByLabelText('New password'), 'short');
    await user.type(screen.getByLabelText('Confirm new password'), 'short');
    await user.click(screen.getByRole('button', { name: 'Update password' }));
    expect(await screen.findByText('Error updating password. Passwords are 8 to 256 characters.')).toBeInTheDocument();
    expect(apiCall).not.toHaveBeenCalledWith('/api/v1/utils/changeuser', expect.anything());
    expect(apiCall).not.toHaveBeenCalledWith('/api/v1/utils/changepassword', expect.anything());
  });
});

describe('changing the username', () => {
  it('keeps the settings screen in place: the keys just generated stay listed and focus stays in the form', async () => {
    let username = 'ada';
    let sessionChecks = 0;
    let answerCheck: () => void = () => {};
    routeCalls(
      apiCall,
      settingsHandlers({
        '/api/v1/auth/data': () => {
          const data = { success: true, user: { _id: '1', username, role: 'default' }, maintenance: false };
          // The check after the change takes a while, as over a phone's connection.
          if (++sessionChecks === 1) return data;
          return new Promise((resolve) => (answerCheck = () => resolve(data)));
        },
        '/api/v1/utils/invites': () => ({ success: true, message: 'Invite key generated', inviteKey: 'INV-KEEP' }),
        '/api/v1/utils/changeuser': (body) => {
          username = String(body.newUsername);
          return { success: true, message: 'Username updated' };
        },
      }),
    );
    renderApp('/settings');
    const user = userEvent.setup();
    await user.click(await screen.findByRole('button', { name: 'Generate invite key' }));
    expect(await screen.findByText('INV-KEEP')).toBeInTheDocument();
    const input = screen.getByLabelText('New username');
    await user.type(input, 'grace');
    await user.click(screen.getByRole('button', { name: 'Update username' }));
    await waitFor(() => expect(sessionChecks).toBe(2));
    expect(screen.getByText('INV-KEEP')).toBeInTheDocument();
    await act(async () => answerCheck());
    expect(await screen.findByText('Current username: grace')).toBeInTheDocument();
    expect(screen.getByText('INV-KEEP')).toBeInTheDocument();
    // The same field, not a new screen drawn in its place with focus dropped to the page.
    expect(screen.getByLabelText('New username')).toBe(input);
  });
});

describe('invite keys and stats', () => {
  it('says why Generate is greyed above it, not under the button beside it', async () => {
    routeCalls(apiCall, settingsHandlers({ '/api/v1/utils/invites/invite-limit': () => ({ success: true, remainingInvites: 0, invitesAllowed: 1, resetsAt: 1_800_000_000 }) }));
    renderApp('/settings');
    const why = await screen.findByText("You have used all of this week's invite keys.");
    const generate = screen.getByRole('button', { name: 'Generate invite key' });
    expect(generate).toBeDisabled();
    expect(generate).toHaveAccessibleDescription("You have used all of this week's invite keys.");
    expect(why.compareDocumentPosition(generate) & Node.DOCUMENT_POSITION_FOLLOWING).toBeTruthy();
  });

  it('shows the remaining weekly count and the formatted stats', async () => {
    routeCalls(apiCall, settingsHandlers());
    renderApp('/settings');
    expect(await screen.findByText(/more invite keys this week/)).toHaveTextContent('You can generate 2 more invite keys this week (of 3).');
    expect(await screen.findByText('2.00 GB')).toBeInTheDocument();
    expect(screen.getByText('1,234')).toBeInTheDocument();
  });

  it("shows the server's weekly limit message and a generated key", async () => {
    let calls = 0;
    routeCalls(
      apiCall,
      settingsHandlers({
        '/api/v1/utils/invites': () => {
          calls += 1;
          if (calls > 1) throw serverError(403, 'You have reached your weekly invite limit.');
          return { success: true, message: 'Invite key generated', inviteKey: 'INV-XYZ' };
        },
      }),
    );
    renderApp('/settings');
    const user = userEvent.setup();
    await user.click(await screen.findByRole('button', { name: 'Generate invite key' }));
    expect(await screen.findByText('INV-XYZ')).toBeInTheDocument();
    await user.click(screen.getByRole('button', { name: 'Generate invite key' }));
    await waitFor(() => expect(screen.getByText('You have reached your weekly invite limit.')).toBeInTheDocument());
  });
});

describe('invite keys refused by the weekly limit', () => {
  it('reads the allowance again after a refusal, so the count and the button show what the server said', async () => {
    // Used up elsewhere (another device) since this screen read its count.
    let remaining = 1;
    routeCalls(
      apiCall,
      settingsHandlers({
        '/api/v1/utils/invites/invite-limit': () => ({ success: true, remainingInvites: remaining, invitesAllowed: 3, resetsAt: 1_800_000_000 }),
        '/api/v1/utils/invites': () => {
          remaining = 0;
          throw serverError(403, 'You have reached your weekly invite limit.');
        },
      }),
    );
    renderApp('/settings');
    const user = userEvent.setup();
    expect(await screen.findByText(/more invite key this week/)).toHaveTextContent('You can generate 1 more invite key this week (of 3).');
    await user.click(screen.getByRole('button', { name: 'Generate invite key' }));
    expect(await screen.findByText('You have reached your weekly invite limit.')).toBeInTheDocument();
    await waitFor(() => expect(screen.getByRole('button', { name: 'Generate invite key' })).toBeDisabled(), { timeout: 5_000 });
    expect(screen.getByText("You have used all of this week's invite keys.")).toBeInTheDocument();
  });
});

describe('/settings with no answer', () => {
  it('says the server cannot be reached for the keys and the stats, and fills both in by itself once it answers', async () => {
    let keysFailures = 1;
    let statsFailures = 1;
    let limitFailures = 1;
    const noAnswer = () => new ApiError('Network Error', { status: 0, fromServer: false });
    routeCalls(
      apiCall,
      settingsHandlers({
        '/api/v1/auth/apikeys': () => {
          if (keysFailures-- > 0) throw noAnswer();
          return { success: true, apiKeys: [] };
        },
        '/api/v1/utils/userstats': () => {
          if (statsFailures-- > 0) throw noAnswer();
          return { success: true, stats: { totalFilesUploaded: 1234, totalStorageUsed: 2_147_483_648 } };
        },
        '/api/v1/utils/invites/invite-limit': () => {
          if (limitFailures-- > 0) throw noAnswer();
          return { success: true, remainingInvites: 2, invitesAllowed: 3, resetsAt: 1_800_000_000 };
        },
      }),
    );
    vi.spyOn(console, 'error').mockImplementation(() => {});
    renderApp('/settings');
    expect(await screen.findByText('The server cannot be reached right now. This list will load by itself as soon as it answers.')).toBeInTheDocument();
    // Unread, the keys are not said to be none; the allowance says why it is missing, not "Loading…".
    expect(screen.queryByText('You have no API keys.')).toBeNull();
    expect(screen.getByText('The server cannot be reached right now. Your weekly invite allowance will load by itself as soon as it answers.')).toBeInTheDocument();
    expect(screen.getByText('The server cannot be reached right now. This section will load by itself as soon as it answers.')).toBeInTheDocument();
    expect(screen.queryByText(/internal error/)).toBeNull();
    expect(await screen.findByText('1,234')).toBeInTheDocument();
    await waitFor(() => expect(screen.queryByText(/cannot be reached/)).toBeNull());
    expect(await screen.findByText('You have no API keys.')).toBeInTheDocument();
    expect(await screen.findByText(/more invite keys this week/)).toBeInTheDocument();
  });
});
