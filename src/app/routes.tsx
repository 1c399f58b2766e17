import type { RouteObject } from 'react-router-dom';
import { adminRoutes } from '../features/admin/routes.tsx';
import { FaqPage } from '../features/public/faq-page.tsx';
import { LandingPage } from '../features/public/landing-page.tsx';
import { PrivacyPage } from '../features/public/privacy-page.tsx';
import { TosPage } from '../features/public/tos-page.tsx';
import { AppLoading } from './app-loading.tsx';
import { NotFound } from './not-found.tsx';
import { PublicLayout } from './public-layout.tsx';
import { Root } from './root.tsx';
import { RouteError } from './route-error.tsx';

/**
 * Spec §2's routes. Kept apart from the browser router so tests can mount them in memory.
 * Pages behind a sign-in (and their layout), logout, and the two forms that pull in the captcha
 * libraries load on demand so the landing page stays light on a phone (issue 9: < 60 KiB of
 * JavaScript on the wire for `/`, checked by tests/server/robustness/first-load.test.ts).
 */
export const routes: RouteObject[] = [
  {
    element: <Root />,
    errorElement: <RouteError />,
    hydrateFallbackElement: <AppLoading />,
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
      { path: 'logout', lazy: async () => ({ Component: (await import('../features/auth/logout-page.tsx')).LogoutPage }) },
      {
        // Its own chunk: the layout pulls in the session's sidebar, bottom bar and their styles,
        // none of which a public page paints (issue 9).
        lazy: async () => ({ Component: (await import('./signed-in-layout.tsx')).SignedInLayout }),
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
