import { Link, NavLink, useLocation } from 'react-router-dom';
import type { RoleName } from '../../contract/common.ts';
import { bottomTabs, sectionTabs, tabIsCurrent, type BottomTab } from './sidebar-links.ts';

const ICONS: Record<BottomTab['icon'], string> = {
  upload: 'M12 16V4 M7 9l5-5 5 5 M5 20h14',
  files: 'M4 6h6l2 2h8v11H4z',
  settings: 'M12 15a3 3 0 1 0 0-6 3 3 0 0 0 0 6z M19 12a7 7 0 0 0-.1-1.2l2-1.6-2-3.4-2.4 1a7 7 0 0 0-2-1.2L14 3h-4l-.5 2.6a7 7 0 0 0-2 1.2l-2.4-1-2 3.4 2 1.6a7 7 0 0 0 0 2.4l-2 1.6 2 3.4 2.4-1a7 7 0 0 0 2 1.2L10 21h4l.5-2.6a7 7 0 0 0 2-1.2l2.4 1 2-3.4-2-1.6c.1-.4.1-.8.1-1.2z',
  admin: 'M12 3l8 3v6c0 5-3.5 8-8 9-4.5-1-8-4-8-9V6z M9 12l2 2 4-4',
};

/** Issue 11 item 6: the phone's navigation, fixed at the bottom (hidden on wide screens by CSS). */
export function BottomNav({ role }: { role: RoleName | undefined }) {
  const { pathname } = useLocation();
  return (
    <nav className="bottom-nav" aria-label="Quick navigation">
      <ul>
        {bottomTabs(role).map((tab) => {
          const current = tabIsCurrent(tab, pathname);
          return (
            <li key={tab.to}>
              <Link to={tab.to} className={current ? 'current' : undefined} aria-current={current ? 'page' : undefined}>
                <svg viewBox="0 0 24 24" aria-hidden="true" focusable="false">
                  <path d={ICONS[tab.icon]} fill="none" stroke="currentColor" strokeWidth="1.8" strokeLinecap="round" strokeLinejoin="round" />
                </svg>
                <span>{tab.label}</span>
              </Link>
            </li>
          );
        })}
      </ul>
    </nav>
  );
}

/** On a phone, the screens of the current section (Settings | Invites Given, the admin screens) as tabs. */
export function SectionTabs({ role }: { role: RoleName | undefined }) {
  const { pathname } = useLocation();
  const section = sectionTabs(role, pathname);
  if (!section) return null;
  return (
    <nav className="section-tabs" aria-label={`${section.title} screens`}>
      <ul>
        {section.links.map((l) => (
          <li key={l.to}>
            <NavLink to={l.to}>{l.label}</NavLink>
          </li>
        ))}
      </ul>
    </nav>
  );
}
