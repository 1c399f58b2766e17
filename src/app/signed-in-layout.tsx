import { useEffect, useState } from 'react';
import { Link, Navigate, NavLink, Outlet } from 'react-router-dom';
import { BottomNav, SectionTabs } from './bottom-nav.tsx';
import { DECORATIVE_COUNT } from '../lib/constants.ts';
import { useRuntimeConfig } from '../lib/runtime-config.ts';
import { useSession } from '../lib/session.tsx';
import { getToken } from '../lib/token.ts';
import { sidebarSections } from './sidebar-links.ts';
import { useOnline } from './use-online.ts';
import './signed-in-layout.css';

/**
 * Spec §2 signed-in layout: top bar, three-section sidebar, a random decorative picture. On a
 * phone the sidebar gives way to a bottom bar and per-section tabs (issue 11 item 6).
 */
export function SignedInLayout() {
  const { user, loading, maintenance } = useSession();
  const { siteName } = useRuntimeConfig();
  const online = useOnline();
  // One picture per visit of the signed-in area (spec §9: 15 bundled images).
  const [picture] = useState(() => 1 + Math.floor(Math.random() * DECORATIVE_COUNT));
  // Signing out must work offline even before the service worker has cached the app (a
  // shared phone that lost its connection right after sign-in): fetch its screen now.
  useEffect(() => void import('../features/auth/logout-page.tsx').catch(() => undefined), []);

  // Spec §2: a missing token sends the user to /login (an invalid one is caught by the session check).
  if (!getToken()) return <Navigate to="/login" replace />;
  if (loading) return null;

  return (
    <div className="app">
      <a className="skip-link" href="#main">
        Skip to content
      </a>
      <header className="topbar">
        <Link to="/" className="brand">
          {siteName}
        </Link>
        <span className="topbar-spacer" />
        {/* On a phone the picture sits in the top bar, where no control can be under it (issue 11 item 6). */}
        <img className="decorative decorative-top" src={`/decorative/${picture}.svg`} alt="" aria-hidden="true" width={32} height={32} />
        {user && <span className="topbar-user">{user.username}</span>}
        <Link to="/logout" className="btn btn-small">
          Logout
        </Link>
      </header>
      <div className="app-body">
        <nav id="sidebar" className="sidebar" aria-label="Sidebar">
          {sidebarSections(user?.role).map((section) => (
            <section key={section.title} className="sidebar-section" aria-labelledby={`sb-${section.title}`}>
              <h2 id={`sb-${section.title}`} className="sidebar-title">
                {section.title}
              </h2>
              <ul>
                {section.links.map((l) => (
                  <li key={l.to}>
                    <NavLink to={l.to}>
                      {l.label}
                    </NavLink>
                  </li>
                ))}
              </ul>
            </section>
          ))}
          {/* On a wide screen it ends the sidebar, below every link: in a corner, over nothing. */}
          <img className="decorative decorative-side" src={`/decorative/${picture}.svg`} alt="" aria-hidden="true" width={96} height={96} />
        </nav>
        <main id="main" className="app-main" tabIndex={-1}>
          <SectionTabs role={user?.role} />
          {!online && (
            <p className="banner banner-warning" role="status">
              You are offline. Uploads wait and continue when the connection returns.
            </p>
          )}
          {maintenance && (
            <p className="banner banner-warning" role="status">
              The site is under maintenance. Some actions are unavailable for now.
            </p>
          )}
          <Outlet />
        </main>
      </div>
      <BottomNav role={user?.role} />
    </div>
  );
}
