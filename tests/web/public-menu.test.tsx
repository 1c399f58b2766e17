import { describe, expect, it } from 'vitest';
import { act, fireEvent, screen, waitFor } from '@testing-library/react';
import { renderApp } from './helpers/render-app.tsx';

// The phone-width menu is a popover the browser runs (tests/e2e/pages.e2e.ts drives it in
// Chromium, with and without JavaScript). jsdom, like a browser from before popovers, has none:
// there the app folds the links itself.
describe('the public menu without popovers (spec §2)', () => {
  it('opens from its toggle and folds away once a link is followed', async () => {
    expect('popover' in HTMLElement.prototype).toBe(false);
    const { router } = renderApp('/');
    const toggle = screen.getByRole('button', { name: 'Menu' });
    await waitFor(() => expect(toggle).toHaveAttribute('aria-expanded', 'false'));
    expect(toggle).toHaveAttribute('aria-controls', 'public-nav');
    // jsdom's own stylesheet hides any [popover] element (and a hidden element has no name); what
    // shows it in a browser without popovers is the class.
    const nav = document.getElementById(toggle.getAttribute('aria-controls')!)!;
    expect(nav.tagName).toBe('NAV');
    expect(nav).not.toHaveClass('open');

    fireEvent.click(toggle);
    expect(toggle).toHaveAttribute('aria-expanded', 'true');
    expect(nav).toHaveClass('open');

    fireEvent.click(screen.getByRole('link', { name: 'FAQ', hidden: true }));
    await waitFor(() => expect(router.state.location.pathname).toBe('/faq'));
    expect(toggle).toHaveAttribute('aria-expanded', 'false');
    expect(nav).not.toHaveClass('open');

    // Open again, then the page changes some other way (the back button): folded.
    fireEvent.click(toggle);
    expect(nav).toHaveClass('open');
    await act(() => router.navigate(-1));
    expect(router.state.location.pathname).toBe('/');
    expect(toggle).toHaveAttribute('aria-expanded', 'false');
    expect(nav).not.toHaveClass('open');
  });
});
