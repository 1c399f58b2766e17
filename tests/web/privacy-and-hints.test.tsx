import { describe, expect, it, vi } from 'vitest';
import { render, screen, within } from '@testing-library/react';
import { renderApp } from './helpers/render-app.tsx';
import { SiteSwitches } from '../../src/features/admin/site-switches.tsx';
import { ConfirmProvider } from '../../src/components/confirm-dialog.tsx';

const api = vi.hoisted(() => ({ impl: (..._args: unknown[]): Promise<unknown> => Promise.resolve({ success: true, settings: { allow_uploading: false, maintenance_mode: false, max_file_size: 1024 } }) }));
vi.mock('../../src/lib/api-client.ts', async (importOriginal) => ({
  ...(await importOriginal<Record<string, unknown>>()),
  call: (...args: unknown[]) => api.impl(...args),
}));

describe('privacy page contact address (design §11, issue 8 item 12)', () => {
  it("shows the operator's CONTACT_EMAIL as a mail link", () => {
    renderApp('/privacy', { contactEmail: 'privacy@example.org' });
    const article = screen.getByRole('article');
    expect(within(article).getByRole('link', { name: 'privacy@example.org' })).toHaveAttribute('href', 'mailto:privacy@example.org');
    expect(within(article).getByText(/We do not log IP addresses/)).toBeInTheDocument();
  });

  it('says plainly that no address is published when none is set', () => {
    renderApp('/privacy', { contactEmail: null });
    const article = screen.getByRole('article');
    expect(within(article).queryByRole('link', { name: /@/ })).not.toBeInTheDocument();
    expect(within(article).getByText(/has not published a contact address/)).toBeInTheDocument();
  });
});

describe('the Allow uploading hint (issue 8 item 14)', () => {
  it('says admins cannot upload either while it is off, as the server enforces', async () => {
    render(
      <ConfirmProvider>
        <SiteSwitches />
      </ConfirmProvider>,
    );
    const sw = await screen.findByRole('switch', { name: /Allow uploading/ });
    const hint = document.getElementById(sw.getAttribute('aria-describedby') ?? '');
    expect(hint).toHaveTextContent('When off, nobody can upload, admins included.');
  });
});
