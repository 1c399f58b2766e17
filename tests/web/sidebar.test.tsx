import { beforeEach, describe, expect, it } from 'vitest';
import { render, screen, within } from '@testing-library/react';
import { createMemoryRouter, RouterProvider } from 'react-router-dom';
import type { RoleName } from '../../contract/common.ts';
import { SignedInLayout } from '../../src/app/signed-in-layout.tsx';
import { StaticSessionProvider } from '../../src/lib/session.tsx';
import { setRuntimeConfig } from '../../src/lib/runtime-config.ts';

function renderLayout(role: RoleName) {
  setRuntimeConfig({ siteName: 'Stash' });
  const router = createMemoryRouter(
    [
      {
        element: (
          <StaticSessionProvider value={{ user: { username: 'u', role } }}>
            <SignedInLayout />
          </StaticSessionProvider>
        ),
        children: [{ path: '/dashboard', element: <p>dash</p> }],
      },
    ],
    { initialEntries: ['/dashboard'] },
  );
  render(<RouterProvider router={router} />);
  return screen.getByRole('navigation', { name: 'Sidebar' });
}

beforeEach(() => localStorage.setItem('token', 't'));

describe('role-based sidebar (spec §2, design §6)', () => {
  it('gives an admin the four Administration links', () => {
    const nav = renderLayout('admin');
    const admin = within(nav).getByRole('region', { name: 'Administration' });
    const links = within(admin).getAllByRole('link');
    expect(links.map((l) => [l.textContent, l.getAttribute('href')])).toEqual([
      ['All files', '/admin/uploaded'],
      ['Site Settings', '/admin/settings'],
      ['Invite Logs', '/admin/invitelogs'],
      ['Users', '/admin/users'],
    ]);
  });

  it('gives a mod only All files', () => {
    const nav = renderLayout('mod');
    const admin = within(nav).getByRole('region', { name: 'Administration' });
    expect(within(admin).getAllByRole('link').map((l) => l.textContent)).toEqual(['All files']);
  });

  it.each(['default', 'trusted'] as const)('shows no Administration section to %s', (role) => {
    const nav = renderLayout(role);
    expect(within(nav).queryByRole('region', { name: 'Administration' })).not.toBeInTheDocument();
    expect(within(nav).queryByRole('link', { name: 'All files' })).not.toBeInTheDocument();
  });

  it('always shows Main and Account with their links, plus the top bar', () => {
    const nav = renderLayout('default');
    expect(within(nav).getAllByRole('link').map((l) => l.getAttribute('href'))).toEqual(['/dashboard', '/uploaded', '/settings', '/invites']);
    expect(screen.getByRole('link', { name: 'Stash' })).toHaveAttribute('href', '/');
    expect(screen.getByRole('link', { name: 'Logout' })).toHaveAttribute('href', '/logout');
  });
});
