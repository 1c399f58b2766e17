// Build-time only (scripts/prerender.mjs): the landing page as HTML, so `/` paints before any
// JavaScript has run (issue 9: Lighthouse's FCP and LCP had waited for the entry script).
import { renderToString } from 'react-dom/server';
import { Route, Routes, StaticRouter } from 'react-router-dom';
import { LandingPage } from '../features/public/landing-page.tsx';
import { PublicLayout } from '../app/public-layout.tsx';
import { setRuntimeConfig, type RuntimeConfig } from '../lib/runtime-config.ts';

/**
 * The DOM `/` starts with on the client (app/routes.tsx: Root renders the public layout first;
 * its providers add no element before it), so main.tsx's first render finds and keeps these
 * nodes. Only what the landing page reads from /config.json varies between deployments.
 */
export function renderLanding(config: Pick<RuntimeConfig, 'siteName' | 'communityUrl'>): string {
  setRuntimeConfig(config);
  return renderToString(
    <StaticRouter location="/">
      <Routes>
        <Route element={<PublicLayout />}>
          <Route index element={<LandingPage />} />
        </Route>
      </Routes>
    </StaticRouter>,
  );
}
