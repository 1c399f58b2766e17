import { useState } from 'react';
import { Link, Navigate, NavLink, Outlet } from 'react-router-dom';
import { DECORATIVE_COUNT } from '../lib/constants.ts';
import { useRuntimeConfig } from '../lib/runtime-config.ts';
import { useSession } from '../lib/session.tsx';
import { getToken } from '../lib/token.ts';
import { sidebarSections } from './sidebar-links.ts';
import { useOnline } from './use-online.ts';
import './signed-in-layout.css';

/** Spec §2 signed-in layout: top bar, three-section sidebar, a random decorative picture. */
export function SignedInLayout() {
  const { user, loading, maintenance } = useSession();
  const { siteName } = useRuntimeConfig();
  const online = useOnline();
  const [menuOpen, setMenuOpen] = useState(false);
  // One picture per visit of the signed-in area (spec §9: 15 bundled images).
  const [picture] = useState(() => 1 + Math.floor(Math.random() * DECORATIVE_COUNT));

  // Spec §2: a missing token sends the user to /login (an invalid one is caught by the session check).
  if (!getToken()) return <Navigate to="/login" replace />;
  if (loading) return null;

  return (
    <div className="app">
      <a className="skip-link" href="#main">
        Skip to content
      </a>
      <header className="topbar">
        <button
          type="button"
          className="btn btn-small sidebar-toggle"
          aria-expanded={menuOpen}
          aria-controls="sidebar"
          onClick={() => setMenuOpen((o) => !o)}
        >
          <span aria-hidden="true">☰</span>
          <span className="visually-hidden">Menu</span>
        </button>
        <Link to="/" className="brand">
          {siteName}
        </Link>
        <span className="topbar-spacer" />
        {user && <span className="topbar-user">{user.username}</span>}
        <Link to="/logout" className="btn btn-small">
          Logout
        </Link>
      </header>
      <div className="app-body">
        <nav id="sidebar" className={`sidebar${menuOpen ? ' open' : ''}`} aria-label="Sidebar">
          {sidebarSections(user?.role).map((section) => (
            <section key={section.title} className="sidebar-section" aria-labelledby={`sb-${section.title}`}>
              <h2 id={`sb-${section.title}`} className="sidebar-title">
                {section.title}
              </h2>
              <ul>
                {section.links.map((l) => (
                  <li key={l.to}>
                    <NavLink to={l.to} onClick={() => setMenuOpen(false)}>
                      {l.label}
                    </NavLink>
                  </li>
                ))}
              </ul>
            </section>
          ))}
        </nav>
        <main id="main" className="app-main" tabIndex={-1}>
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
      <img className="decorative" src={`/decorative/${picture}.svg`} alt="" aria-hidden="true" width={96} height={96} />
    </div>
  );
}
