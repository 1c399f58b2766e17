import { render } from '@testing-library/react';
import { Outlet, RouterProvider, createMemoryRouter } from 'react-router-dom';
import { StaticSessionProvider, type SessionUser } from '../../../src/lib/session.tsx';
import { ConfirmProvider } from '../../../src/components/confirm-dialog.tsx';
import { adminRoutes } from '../../../src/features/admin/routes.tsx';

/**
 * Mounts the real admin routes under a stand-in signed-in layout, with a fixed session, at
 * `path`. The dashboard and home stand-ins let a test see where a redirect went.
 */
export function renderAdmin(path: string, user: SessionUser | null) {
  const router = createMemoryRouter(
    [
      {
        path: '/',
        element: <Outlet />,
        children: [
          { index: true, element: <p>Home page</p> },
          { path: 'dashboard', element: <p>Dashboard page</p> },
          ...adminRoutes,
        ],
      },
    ],
    { initialEntries: [path] },
  );
  const utils = render(
    <StaticSessionProvider value={{ user }}>
      <ConfirmProvider>
        <RouterProvider router={router} />
      </ConfirmProvider>
    </StaticSessionProvider>,
  );
  return { ...utils, router };
}
