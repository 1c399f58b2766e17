import { useEffect, useRef, useState } from 'react';
import { NavLink, Outlet, useLocation } from 'react-router-dom';
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

/** Wider than this the links sit in the header and the toggle is hidden (public-layout.css). */
const WIDE = '(min-width: 761px)';

const supportsPopover = () => typeof HTMLElement !== 'undefined' && 'popover' in HTMLElement.prototype;

/**
 * Spec §2 public navigation; on small screens it folds behind a toggle. The toggle opens the
 * links as a popover (`popovertarget`), which the browser runs by itself: the prerendered pages
 * (issue 9) have a working menu before the app's script has loaded, and with JavaScript turned
 * off. A browser without popovers gets the same menu from the app's own state.
 */
export function PublicLayout() {
  const { siteName } = useRuntimeConfig();
  const nav = useRef<HTMLElement>(null);
  // null: the browser runs the menu. Known only after hydration, so the first render matches the HTML.
  const [fallbackOpen, setFallbackOpen] = useState<boolean | null>(null);

  const foldPopover = () => {
    if (supportsPopover() && nav.current?.matches(':popover-open')) nav.current.hidePopover();
  };
  const fold = () => {
    setFallbackOpen((open) => (open === null ? null : false));
    foldPopover();
  };

  // Followed links fold it (a link to the page already shown changes nothing else), and so does a
  // page changed any other way (the back button, Android's among them).
  const { pathname } = useLocation();
  useEffect(fold, [pathname]);

  useEffect(() => {
    if (!supportsPopover()) {
      setFallbackOpen(false);
      return;
    }
    // Turned to landscape with the menu open: the links are back in the header.
    const wide = window.matchMedia(WIDE);
    const onChange = () => {
      if (wide.matches) foldPopover();
    };
    wide.addEventListener('change', onChange);
    return () => wide.removeEventListener('change', onChange);
  }, []);

  return (
    <div className="public">
      <a className="skip-link" href="#main">
        Skip to content
      </a>
      <header className="public-header">
        <NavLink to="/" className="brand" onClick={fold}>
          {siteName}
        </NavLink>
        <button
          type="button"
          className="btn btn-small nav-toggle"
          popoverTarget="public-nav"
          aria-expanded={fallbackOpen ?? undefined}
          aria-controls={fallbackOpen === null ? undefined : 'public-nav'}
          onClick={fallbackOpen === null ? undefined : () => setFallbackOpen(!fallbackOpen)}
        >
          <span aria-hidden="true">☰</span>
          <span className="visually-hidden">Menu</span>
        </button>
        <nav id="public-nav" ref={nav} popover="auto" className={`public-nav${fallbackOpen ? ' open' : ''}`} aria-label="Main">
          <ul>
            {LINKS.map((l) => (
              <li key={l.to}>
                <NavLink to={l.to} end={l.end} onClick={fold}>
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
