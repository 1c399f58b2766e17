import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { routeCalls, serverError } from './helpers/api-mock.ts';
import { renderApp } from './helpers/render-app.tsx';

const apiCall = vi.hoisted(() => vi.fn());
vi.mock('../../src/lib/api-client.ts', async (orig) => ({ ...(await orig<object>()), call: apiCall }));
vi.mock('@hcaptcha/react-hcaptcha', async () => ({ default: (await import('./helpers/captcha-mocks.tsx')).FakeHCaptcha }));
vi.mock('@marsidev/react-turnstile', async () => ({ Turnstile: (await import('./helpers/captcha-mocks.tsx')).FakeTurnstile }));

/** The forms load on demand (routes.tsx), so wait for their heading. */
async function open(path: '/login' | '/register', config: Parameters<typeof renderApp>[1] = {}) {
  const view = renderApp(path, config);
  await screen.findByRole('heading', { name: path === '/login' ? 'Login' : 'Register' });
  return view;
}

/** Where the router is going: a navigation waiting for its screen to load, else where it is. */
function destination(router: Awaited<ReturnType<typeof open>>['router']): string {
  return router.state.navigation.location?.pathname ?? router.state.location.pathname;
}

const BOTH = { hcaptchaSiteKey: 'h-site', turnstileSiteKey: 't-site' };

beforeEach(() => localStorage.clear());
afterEach(() => apiCall.mockReset());

async function fillLogin(user: ReturnType<typeof userEvent.setup>) {
  await user.type(screen.getByLabelText('Username'), 'ada');
  await user.type(screen.getByLabelText('Password'), 'secret-password');
}

describe('login (spec §2, §5, §8)', () => {
  it("refuses without the captcha: 'You must verify the captcha', and sends nothing", async () => {
    routeCalls(apiCall, {});
    await open('/login', { hcaptchaSiteKey: 'h-site' });
    const user = userEvent.setup();
    await fillLogin(user);
    await user.click(screen.getByRole('button', { name: 'Login' }));
    expect(screen.getByRole('alert')).toHaveTextContent('You must verify the captcha');
    expect(apiCall).not.toHaveBeenCalledWith('/api/v1/auth/login', expect.anything());
  });

  it('shows no widget and no captcha rule when no provider is configured', async () => {
    routeCalls(apiCall, { '/api/v1/auth/login': () => ({ success: true, token: 'tok' }) });
    await open('/login');
    expect(screen.queryByRole('button', { name: /Solve/ })).not.toBeInTheDocument();
    const user = userEvent.setup();
    await fillLogin(user);
    await user.click(screen.getByRole('button', { name: 'Login' }));
    expect(apiCall).toHaveBeenCalledWith('/api/v1/auth/login', { username: 'ada', password: 'secret-password' });
  });

  it('switches provider only when both have site keys, and sends the chosen captchaType', async () => {
    routeCalls(apiCall, { '/api/v1/auth/login': () => ({ success: true, token: 'tok' }) });
    await open('/login', BOTH);
    const user = userEvent.setup();
    expect(screen.getByRole('button', { name: 'Solve hCaptcha' })).toBeInTheDocument(); // the first provider is the default
    await user.click(screen.getByRole('button', { name: /Use Cloudflare Turnstile instead/ }));
    await user.click(screen.getByRole('button', { name: 'Solve Turnstile' }));
    await fillLogin(user);
    await user.click(screen.getByRole('button', { name: 'Login' }));
    expect(apiCall).toHaveBeenCalledWith('/api/v1/auth/login', {
      username: 'ada',
      password: 'secret-password',
      captcha: 't-token',
      captchaType: 'turnstile',
    });
  });

  it('has no switch link with one provider', async () => {
    await open('/login', { turnstileSiteKey: 't-site' });
    expect(screen.getByRole('button', { name: 'Solve Turnstile' })).toBeInTheDocument();
    expect(screen.queryByRole('button', { name: /instead/ })).not.toBeInTheDocument();
  });

  it("shows the server's words in a red 'Error: ...' banner", async () => {
    routeCalls(apiCall, {
      '/api/v1/auth/login': () => {
        throw serverError(401, 'Invalid username or password');
      },
    });
    await open('/login');
    const user = userEvent.setup();
    await fillLogin(user);
    await user.click(screen.getByRole('button', { name: 'Login' }));
    expect(await screen.findByRole('alert')).toHaveTextContent('Error: Invalid username or password');
    expect(localStorage.getItem('token')).toBeNull();
  });

  it('announces success, stores the token and goes to /dashboard', async () => {
    routeCalls(apiCall, {
      '/api/v1/auth/login': () => ({ success: true, token: 'fresh' }),
      '/api/v1/auth/data': () => ({ success: true, user: { _id: '1', username: 'ada', role: 'default' }, maintenance: false }),
      '/api/v1/utils/filesize': () => ({ success: true, maxFileSize: 100 }),
    });
    const { router } = await open('/login');
    const user = userEvent.setup();
    await fillLogin(user);
    await user.click(screen.getByRole('button', { name: 'Login' }));
    expect(await screen.findByText('Success: You have been authenticated! Redirecting...')).toBeInTheDocument();
    // The redirect starts within 4 s (REDIRECT_DELAY_MS, then the session); the screen it opens
    // loads on demand, which a busy machine may take longer over.
    await waitFor(() => expect(destination(router)).toBe('/dashboard'), { timeout: 4000 });
    await waitFor(() => expect(router.state.location.pathname).toBe('/dashboard'));
    expect(localStorage.getItem('token')).toBe('fresh');
  });
});

describe('register (spec §2, §5)', () => {
  async function fillRegister(user: ReturnType<typeof userEvent.setup>, confirm = 'long-password') {
    await user.type(screen.getByLabelText('Username'), 'newbie');
    await user.type(screen.getByLabelText('Password'), 'long-password');
    await user.type(screen.getByLabelText('Confirm password'), confirm);
    await user.type(screen.getByLabelText('Invite code'), 'INVITE-1');
  }

  it("keeps submit disabled and labelled 'Please agree to our privacy policy and TOS' until the box is ticked", async () => {
    await open('/register');
    const button = screen.getByRole('button', { name: 'Please agree to our privacy policy and TOS' });
    expect(button).toBeDisabled();
    const label = screen.getByText(/I agree to the/);
    expect(within(label).getByRole('link', { name: 'Privacy Policy' })).toHaveAttribute('href', '/privacy');
    expect(within(label).getByRole('link', { name: 'Terms of Service' })).toHaveAttribute('href', '/tos');
    await userEvent.setup().click(screen.getByRole('checkbox'));
    expect(screen.getByRole('button', { name: 'Register' })).toBeEnabled();
  });

  it("compares the confirmation: 'Passwords do not match'", async () => {
    routeCalls(apiCall, {});
    await open('/register');
    const user = userEvent.setup();
    await fillRegister(user, 'other-password');
    await user.click(screen.getByRole('checkbox'));
    await user.click(screen.getByRole('button', { name: 'Register' }));
    expect(screen.getByRole('alert')).toHaveTextContent('Passwords do not match');
    expect(apiCall).not.toHaveBeenCalled();
  });

  it('says what a username and a password must be before sending, not the API field names', async () => {
    routeCalls(apiCall, {});
    await open('/register');
    const user = userEvent.setup();
    await user.type(screen.getByLabelText('Username'), 'al');
    await user.type(screen.getByLabelText('Password'), 'long-password');
    await user.type(screen.getByLabelText('Confirm password'), 'long-password');
    await user.type(screen.getByLabelText('Invite code'), 'INVITE-1');
    await user.click(screen.getByRole('checkbox'));
    await user.click(screen.getByRole('button', { name: 'Register' }));
    expect(screen.getByRole('alert')).toHaveTextContent('Usernames are 3 to 32 letters, digits, _, . or -.');
    await user.type(screen.getByLabelText('Username'), 'ice');
    await user.clear(screen.getByLabelText('Password'));
    await user.type(screen.getByLabelText('Password'), 'short');
    await user.clear(screen.getByLabelText('Confirm password'));
    await user.type(screen.getByLabelText('Confirm password'), 'short');
    await user.click(screen.getByRole('button', { name: 'Register' }));
    expect(screen.getByRole('alert')).toHaveTextContent('Passwords are 8 to 256 characters.');
    expect(apiCall).not.toHaveBeenCalled();
  });

  it('requires every field', async () => {
    routeCalls(apiCall, {});
    await open('/register');
    const user = userEvent.setup();
    await user.click(screen.getByRole('checkbox'));
    await user.click(screen.getByRole('button', { name: 'Register' }));
    expect(screen.getByRole('alert')).toHaveTextContent('Please fill in all fields.');
    expect(apiCall).not.toHaveBeenCalled();
  });

  it("toasts 'Please verify the captcha.' when a captcha is configured but unsolved", async () => {
    routeCalls(apiCall, {});
    await open('/register', { hcaptchaSiteKey: 'h-site' });
    const user = userEvent.setup();
    await fillRegister(user);
    await user.click(screen.getByRole('checkbox'));
    await user.click(screen.getByRole('button', { name: 'Register' }));
    expect(await screen.findByText('Please verify the captcha.')).toBeInTheDocument();
    expect(apiCall).not.toHaveBeenCalled();
  });

  it('registers with the invite, announces success and goes to /login', async () => {
    routeCalls(apiCall, { '/api/v1/auth/register': () => ({ success: true, message: 'ok' }) });
    const { router } = await open('/register', { hcaptchaSiteKey: 'h-site' });
    const user = userEvent.setup();
    await fillRegister(user);
    await user.click(screen.getByRole('button', { name: 'Solve hCaptcha' }));
    await user.click(screen.getByRole('checkbox'));
    await user.click(screen.getByRole('button', { name: 'Register' }));
    expect(apiCall).toHaveBeenCalledWith('/api/v1/auth/register', {
      username: 'newbie',
      password: 'long-password',
      invitekey: 'INVITE-1',
      captcha: 'h-token',
      captchaType: 'hcaptcha',
    });
    expect(await screen.findByText('Success: Account has been created! Redirecting...')).toBeInTheDocument();
    await waitFor(() => expect(destination(router)).toBe('/login'), { timeout: 4000 });
    await waitFor(() => expect(router.state.location.pathname).toBe('/login'));
  });

  it("shows a used invite's server message as 'Error: ...'", async () => {
    routeCalls(apiCall, {
      '/api/v1/auth/register': () => {
        throw serverError(400, 'Invalid or already used invite key');
      },
    });
    await open('/register');
    const user = userEvent.setup();
    await fillRegister(user);
    await user.click(screen.getByRole('checkbox'));
    await user.click(screen.getByRole('button', { name: 'Register' }));
    expect(await screen.findByRole('alert')).toHaveTextContent('Error: Invalid or already used invite key');
  });
});
