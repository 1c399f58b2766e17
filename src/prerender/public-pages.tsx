// Build-time only (scripts/prerender.mjs): the public pages as HTML, so they paint before any
// JavaScript has run (issue 9: Lighthouse's FCP and LCP had waited for the entry script).
import type { ReactElement } from 'react';
import { renderToString } from 'react-dom/server';
import { Route, Routes, StaticRouter } from 'react-router-dom';
import { FaqPage } from '../features/public/faq-page.tsx';
import { LandingPage } from '../features/public/landing-page.tsx';
import { PrivacyPage } from '../features/public/privacy-page.tsx';
import { TosPage } from '../features/public/tos-page.tsx';
import { PublicLayout } from '../app/public-layout.tsx';
import { pageTitle } from '../app/page-titles.ts';
import { setRuntimeConfig, type RuntimeConfig } from '../lib/runtime-config.ts';

/** The pages whose whole first screen is static text (app/routes.tsx mounts the same elements, eagerly). */
const PAGES: Record<string, ReactElement> = {
  '/': <LandingPage />,
  '/privacy': <PrivacyPage />,
  '/tos': <TosPage />,
  '/faq': <FaqPage />,
};

export const PRERENDERED_PATHS = Object.keys(PAGES);

/** What of /config.json the public pages read. */
export type PageConfig = Pick<RuntimeConfig, 'siteName' | 'communityUrl' | 'contactEmail' | 'donationWallets'>;

/**
 * The DOM `pathname` starts with on the client (app/routes.tsx: Root renders the public layout
 * first; its providers add no element before it), so main.tsx's first render finds and keeps
 * these nodes; and the document title the app gives that page.
 */
export function renderPublicPage(pathname: string, config: PageConfig): { title: string; markup: string } {
  const page = PAGES[pathname];
  if (!page) throw new Error(`${pathname} is not a prerendered page`);
  setRuntimeConfig(config);
  const markup = renderToString(
    <StaticRouter location={pathname}>
      <Routes>
        <Route element={<PublicLayout />}>
          <Route path={pathname} element={page} />
        </Route>
      </Routes>
    </StaticRouter>,
  );
  return { title: pageTitle(pathname, config.siteName), markup };
}
