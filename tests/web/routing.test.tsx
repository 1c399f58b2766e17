import { describe, expect, it } from 'vitest';
import { render, screen } from '@testing-library/react';
import { createMemoryRouter, RouterProvider } from 'react-router-dom';
import { RouteError } from '../../src/app/route-error.tsx';
import { renderApp } from './helpers/render-app.tsx';

function Boom(): never {
  throw new Error('Something broke in a loader');
}

describe('routing (spec §2, §8)', () => {
  it("shows 'Page Not Found' with a link home for an unknown path", () => {
    renderApp('/no/such/page');
    expect(screen.getByRole('heading', { name: 'Page Not Found' })).toBeInTheDocument();
    expect(screen.getByRole('link', { name: 'Go back home' })).toHaveAttribute('href', '/');
  });

  it("shows 'Unexpected Application Error!' with the error text when a route fails", () => {
    const router = createMemoryRouter([{ path: '/', element: <Boom />, errorElement: <RouteError /> }]);
    const quiet = console.error;
    console.error = () => {};
    render(<RouterProvider router={router} />);
    console.error = quiet;
    expect(screen.getByRole('heading', { name: 'Unexpected Application Error!' })).toBeInTheDocument();
    expect(screen.getByText('Something broke in a loader')).toBeInTheDocument();
    // Not a connection problem: no "try again" that would only fail the same way.
    expect(screen.queryByRole('button', { name: 'Try again' })).toBeNull();
  });

  it('says a screen whose code could not be fetched needs the connection, and offers to try again', async () => {
    const router = createMemoryRouter([
      {
        path: '/',
        lazy: async () => {
          throw new TypeError('Failed to fetch dynamically imported module: http://stash.test/assets/logout-page-x.js');
        },
        errorElement: <RouteError />,
      },
    ]);
    const quiet = console.error;
    console.error = () => {};
    render(<RouterProvider router={router} />);
    console.error = quiet;
    await screen.findByText(/This screen could not be loaded\. Check your connection/);
    expect(screen.getByRole('heading', { name: 'Unexpected Application Error!' })).toBeInTheDocument();
    expect(screen.getByRole('button', { name: 'Try again' })).toBeInTheDocument();
  });

  it('renders the public pages with their spec §1 content', () => {
    renderApp('/faq');
    expect(screen.getByText('$131')).toBeInTheDocument();
  });

  it('gives the landing hero exactly two buttons: community and login', () => {
    renderApp('/', { communityUrl: 'https://chat.example/invite' });
    const hero = screen.getByRole('region', { name: 'Stash' });
    expect(screen.getByRole('link', { name: 'Join the community' })).toHaveAttribute('href', 'https://chat.example/invite');
    expect(hero.querySelectorAll('.hero-actions > *')).toHaveLength(2);
  });

  it('shows Login alone in the hero where no community channel is configured', () => {
    renderApp('/', { communityUrl: null });
    const hero = screen.getByRole('region', { name: 'Stash' });
    expect(screen.queryByText('Join the community')).toBeNull();
    expect([...hero.querySelectorAll('.hero-actions > *')].map((el) => el.textContent)).toEqual(['Login']);
  });
});
