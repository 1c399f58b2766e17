import type { RouteObject } from 'react-router-dom';
import { adminRoutes } from '../features/admin/routes.tsx';
import { LogoutPage } from '../features/auth/logout-page.tsx';
import { FaqPage } from '../features/public/faq-page.tsx';
import { LandingPage } from '../features/public/landing-page.tsx';
import { PrivacyPage } from '../features/public/privacy-page.tsx';
import { TosPage } from '../features/public/tos-page.tsx';
import { NotFound } from './not-found.tsx';
import { PublicLayout } from './public-layout.tsx';
import { Root } from './root.tsx';
import { RouteError } from './route-error.tsx';
import { SignedInLayout } from './signed-in-layout.tsx';

/**
 * Spec §2's routes. Kept apart from the browser router so tests can mount them in memory.
 * Pages behind a sign-in, and the two forms that pull in the captcha libraries, load on demand
 * so the landing page stays light on a phone.
 */
export const routes: RouteObject[] = [
  {
    element: <Root />,
    errorElement: <RouteError />,
    children: [
      {
        element: <PublicLayout />,
        children: [
          { index: true, element: <LandingPage /> },
          { path: 'privacy', element: <PrivacyPage /> },
          { path: 'tos', element: <TosPage /> },
          { path: 'faq', element: <FaqPage /> },
          { path: 'login', lazy: async () => ({ Component: (await import('../features/auth/login-page.tsx')).LoginPage }) },
          { path: 'register', lazy: async () => ({ Component: (await import('../features/auth/register-page.tsx')).RegisterPage }) },
        ],
      },
      { path: 'logout', element: <LogoutPage /> },
      {
        element: <SignedInLayout />,
        // A failing screen keeps the top bar and sidebar; only its own area shows the error.
        errorElement: <RouteError />,
        children: [
          { path: 'dashboard', lazy: async () => ({ Component: (await import('../features/upload/dashboard-page.tsx')).DashboardPage }) },
          { path: 'uploaded', lazy: async () => ({ Component: (await import('../features/files/uploaded-page.tsx')).UploadedPage }) },
          { path: 'settings', lazy: async () => ({ Component: (await import('../features/settings/settings-page.tsx')).SettingsPage }) },
          { path: 'invites', lazy: async () => ({ Component: (await import('../features/invites/invites-page.tsx')).InvitesPage }) },
          ...adminRoutes,
        ],
      },
      { path: '*', element: <NotFound /> },
    ],
  },
];
