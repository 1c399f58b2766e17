import { useState } from 'react';
import { NavLink, Outlet } from 'react-router-dom';
import { useRuntimeConfig } from '../lib/runtime-config.ts';
import './public-layout.css';
// Starts listening for the browser's install offer with the first public page (issue 11 item 13).
import '../lib/install-prompt.ts';

const LINKS = [
  { to: '/', label: 'Home', end: true },
  { to: '/privacy', label: 'Privacy Policy' },
  { to: '/tos', label: 'Terms of Service' },
  { to: '/faq', label: 'FAQ' },
  { to: '/login', label: 'Login' },
  { to: '/register', label: 'Register' },
];

/** Spec §2 public navigation; on small screens it collapses behind a toggle. */
export function PublicLayout() {
  const { siteName } = useRuntimeConfig();
  const [open, setOpen] = useState(false);
  return (
    <div className="public">
      <a className="skip-link" href="#main">
        Skip to content
      </a>
      <header className="public-header">
        <NavLink to="/" className="brand" onClick={() => setOpen(false)}>
          {siteName}
        </NavLink>
        <button
          type="button"
          className="btn btn-small nav-toggle"
          aria-expanded={open}
          aria-controls="public-nav"
          onClick={() => setOpen((o) => !o)}
        >
          <span aria-hidden="true">☰</span>
          <span className="visually-hidden">Menu</span>
        </button>
        <nav id="public-nav" className={`public-nav${open ? ' open' : ''}`} aria-label="Main">
          <ul>
            {LINKS.map((l) => (
              <li key={l.to}>
                <NavLink to={l.to} end={l.end} onClick={() => setOpen(false)}>
                  {l.label}
                </NavLink>
              </li>
            ))}
          </ul>
        </nav>
      </header>
      <main id="main" className="public-main" tabIndex={-1}>
        <Outlet />
      </main>
    </div>
  );
}
