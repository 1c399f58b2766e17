import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { act, render, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { pageTitle } from '../../src/app/page-titles.ts';
import { bottomTabs, sectionTabs, tabIsCurrent } from '../../src/app/sidebar-links.ts';
import { ShareButton } from '../../src/components/share-button.tsx';
import { fileKind, previewsOf, srcSetOf } from '../../src/lib/file-kind.ts';
import { isClientRoute } from '../../contract/site-routes.ts';
import { routeCalls, type Handler } from './helpers/api-mock.ts';
import { renderApp } from './helpers/render-app.tsx';

const apiCall = vi.hoisted(() => vi.fn());
vi.mock('../../src/lib/api-client.ts', async (orig) => ({ ...(await orig<object>()), call: apiCall }));

const USER = { '/api/v1/auth/data': () => ({ success: true, user: { _id: '1', username: 'ada', role: 'default' }, maintenance: false }) };

beforeEach(() => localStorage.setItem('token', 'tok'));
afterEach(() => {
  apiCall.mockReset();
  vi.restoreAllMocks();
  localStorage.clear();
});

describe('file kinds and previews (issue 11 item 9)', () => {
  it('names a kind for every MIME type', () => {
    expect(['image/webp', 'video/mp4', 'audio/ogg', 'application/pdf', 'application/zip', 'application/x-7z-compressed', 'text/plain', 'application/json', 'application/octet-stream'].map(fileKind)).toEqual([
      'image', 'video', 'audio', 'pdf', 'archive', 'archive', 'text', 'text', 'other',
    ]);
  });

  it('reads previews narrowest first, tolerating a missing field or junk, and builds srcset on the files host', () => {
    expect(previewsOf({})).toEqual([]);
    expect(previewsOf({ previews: 'nope' })).toEqual([]);
    const ps = previewsOf({ previews: [{ width: 320, height: 240, url: '/p/320.webp' }, { width: 0, height: 1, url: 'x' }, { width: 160, height: 120, url: 'https://cdn.test/160.webp' }] });
    expect(ps.map((p) => p.width)).toEqual([160, 320]);
    expect(srcSetOf(ps, 'http://files.test')).toBe('https://cdn.test/160.webp 160w, http://files.test/p/320.webp 320w');
  });
});

describe('SPA basics (issue 11 item 10)', () => {
  it('titles every screen and calls any other path Page Not Found', () => {
    expect(pageTitle('/', 'Stash')).toBe('Stash · Invite-only file hosting');
    expect(pageTitle('/uploaded', 'Stash')).toBe('Uploaded Files · Stash');
    expect(pageTitle('/admin/invitelogs/', 'Stash')).toBe('Invite Logs · Stash');
    expect(pageTitle('/nope', 'Stash')).toBe('Page Not Found · Stash');
  });

  it('agrees with the server on what is a route', () => {
    expect(['/', '/dashboard', '/dashboard/', '/register?invite=k', '/admin/users#x'].every(isClientRoute)).toBe(true);
    expect(['/admin', '/nope', '/uploaded/x', '/robots.txt'].some(isClientRoute)).toBe(false);
  });

  it('sets the title, scrolls to the top and focuses the new heading after a navigation', async () => {
    routeCalls(apiCall, { ...USER, '/api/v1/files/uploaded': () => ({ success: true, files: [], totalImages: 0 }), '/api/v1/utils/filesize': () => ({ success: true, maxFileSize: 100 }) });
    const scroll = vi.spyOn(window, 'scrollTo');
    const { router } = renderApp('/uploaded');
    await screen.findByRole('heading', { name: 'Uploaded Files', level: 1 });
    expect(document.title).toBe('Uploaded Files · Stash');
    expect(scroll).not.toHaveBeenCalled(); // the first load keeps the browser's own position and focus
    await act(() => router.navigate('/dashboard'));
    const h1 = await screen.findByRole('heading', { name: 'File Uploader', level: 1 });
    await waitFor(() => expect(h1).toHaveFocus());
    expect(document.title).toBe('File Uploader · Stash');
    expect(scroll).toHaveBeenCalledWith(0, 0);
  });
});

describe('bottom navigation (issue 11 item 6)', () => {
  it('gives everyone Upload, Files and Settings, and mods and admins Admin', () => {
    expect(bottomTabs('default').map((t) => t.label)).toEqual(['Upload', 'Files', 'Settings']);
    expect(bottomTabs('mod').map((t) => t.label)).toEqual(['Upload', 'Files', 'Settings', 'Admin']);
    const [, , settings, admin] = bottomTabs('admin');
    expect(tabIsCurrent(settings!, '/invites')).toBe(true);
    expect(tabIsCurrent(admin!, '/admin/users')).toBe(true);
    expect(sectionTabs('admin', '/admin/users')?.links.map((l) => l.label)).toEqual(['All files', 'Site Settings', 'Invite Logs', 'Users']);
    expect(sectionTabs('mod', '/admin/uploaded')).toBeNull(); // one screen: nothing to switch between
    expect(sectionTabs('default', '/settings')?.links.map((l) => l.to)).toEqual(['/settings', '/invites']);
  });
});

describe('Share (issue 11 item 8)', () => {
  it('opens the system share sheet where there is one', async () => {
    const share = vi.fn(async () => {});
    Object.defineProperty(navigator, 'share', { value: share, configurable: true });
    render(<ShareButton url="http://files.test/a.png" title="a.png" />);
    await userEvent.click(screen.getByRole('button', { name: 'Share' }));
    expect(share).toHaveBeenCalledWith({ title: 'a.png', url: 'http://files.test/a.png' });
    delete (navigator as { share?: unknown }).share;
  });

  it('copies the link otherwise and says so', async () => {
    const writeText = vi.fn(async () => {});
    Object.defineProperty(navigator, 'clipboard', { value: { writeText }, configurable: true });
    render(<ShareButton url="http://files.test/a.png" title="a.png" />);
    await userEvent.click(screen.getByRole('button', { name: 'Share' }));
    expect(writeText).toHaveBeenCalledWith('http://files.test/a.png');
    expect(await screen.findByText('Copied to clipboard')).toBeInTheDocument();
  });
});

describe('invites on a phone (issue 11 items 11, 12)', () => {
  it('fills the invite code from an invite link', async () => {
    localStorage.clear();
    routeCalls(apiCall, {});
    renderApp('/register?invite=KEY-123');
    expect(await screen.findByLabelText('Invite code')).toHaveValue('KEY-123');
  });

  it('disables Generate invite key when none are left this week, and says why', async () => {
    const handlers: Record<string, Handler> = {
      ...USER,
      '/api/v1/auth/apikeys': () => ({ success: true, apiKeys: [] }),
      '/api/v1/utils/invites/invite-limit': () => ({ success: true, remainingInvites: 0, invitesAllowed: 3, resetsAt: 1_800_000_000 }),
      '/api/v1/utils/userstats': () => ({ success: true, stats: { totalFilesUploaded: 0, totalStorageUsed: 0 } }),
    };
    routeCalls(apiCall, handlers);
    renderApp('/settings');
    await screen.findByText("You have used all of this week's invite keys.");
    expect(screen.getByRole('button', { name: 'Generate invite key' })).toBeDisabled();
  });
});

describe('the dashboard (issue 11 items 8, 12)', () => {
  const FILE = { url: 'http://internal/x.png', actual_name: 'x.png', original_name: 'holiday.png', username: 'ada', size: 10, time_created: 1_700_000_000, width: 1, height: 1, mime_type: 'image/png' };

  it('lists recent uploads with Copy link and Share', async () => {
    routeCalls(apiCall, { ...USER, '/api/v1/utils/filesize': () => ({ success: true, maxFileSize: 100 }), '/api/v1/files/uploaded': () => ({ success: true, files: [FILE], totalImages: 1 }) });
    renderApp('/dashboard');
    const recent = await screen.findByRole('region', { name: 'Recent uploads' });
    expect(within(recent).getByText('holiday.png')).toBeInTheDocument();
    expect(within(recent).getByRole('button', { name: 'Share holiday.png' })).toBeInTheDocument();
    expect(within(recent).getByRole('button', { name: 'Copy link' })).toBeInTheDocument();
    expect(apiCall).toHaveBeenCalledWith('/api/v1/files/uploaded', { page: 1, pageSize: 4, filters: { name: '' }, sort: 'newest' });
  });

  it('never leaves the maximum file size on "…" when the server cannot say', async () => {
    vi.spyOn(console, 'error').mockImplementation(() => {});
    routeCalls(apiCall, { ...USER, '/api/v1/files/uploaded': () => ({ success: true, files: [], totalImages: 0 }) });
    renderApp('/dashboard');
    await screen.findByRole('heading', { name: 'File Uploader' });
    await waitFor(() => expect(screen.queryByText(/Maximum file size/)).toBeNull());
  });
});

describe('the landing page (issue 11 item 13)', () => {
  it('says what Stash does, shows the app, offers Register with an invite beside Login, and the install prompt when the browser offers one', async () => {
    localStorage.clear();
    routeCalls(apiCall, {});
    renderApp('/');
    const hero = screen.getByRole('region', { name: 'Stash' });
    expect(within(hero).getByRole('link', { name: 'Login' })).toHaveAttribute('href', '/login');
    expect(within(hero).getByRole('link', { name: 'Register with an invite' })).toHaveAttribute('href', '/register');
    expect(screen.getByRole('img', { name: /The Stash app on a phone/ })).toHaveAttribute('src', '/landing/app-light.jpg');
    expect(screen.getByRole('heading', { name: 'A link for every file' })).toBeInTheDocument();
    expect(screen.queryByRole('button', { name: 'Install the app' })).toBeNull();

    // What Chromium fires when the app is installable (its prompt() opens the browser's dialog).
    const offer = Object.assign(new Event('beforeinstallprompt', { cancelable: true }), {
      prompt: vi.fn(async () => {}),
      userChoice: Promise.resolve({ outcome: 'accepted' as const }),
    });
    act(() => {
      window.dispatchEvent(offer);
    });
    expect(offer.defaultPrevented).toBe(true); // no mini bar: our button asks instead
    await userEvent.click(await screen.findByRole('button', { name: 'Install the app' }));
    expect(offer.prompt).toHaveBeenCalledOnce();
    // The offer is used up.
    await waitFor(() => expect(screen.queryByRole('button', { name: 'Install the app' })).toBeNull());
  });
});
