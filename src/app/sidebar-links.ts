import type { RoleName } from '../../contract/common.ts';

export interface SidebarSection {
  title: string;
  links: { to: string; label: string }[];
}

/**
 * Spec §2's three sections. Design §6 takes the spec's first reading of Administration: admin
 * sees all four links, mod sees only All files, default and trusted see no section at all.
 */
export function sidebarSections(role: RoleName | undefined): SidebarSection[] {
  const sections: SidebarSection[] = [
    { title: 'Main', links: [{ to: '/dashboard', label: 'Dashboard' }, { to: '/uploaded', label: 'Uploaded Files' }] },
    { title: 'Account', links: [{ to: '/settings', label: 'Settings' }, { to: '/invites', label: 'Invites Given' }] },
  ];
  if (role === 'admin') {
    sections.push({
      title: 'Administration',
      links: [
        { to: '/admin/uploaded', label: 'All files' },
        { to: '/admin/settings', label: 'Site Settings' },
        { to: '/admin/invitelogs', label: 'Invite Logs' },
        { to: '/admin/users', label: 'Users' },
      ],
    });
  } else if (role === 'mod') {
    sections.push({ title: 'Administration', links: [{ to: '/admin/uploaded', label: 'All files' }] });
  }
  return sections;
}

export interface BottomTab {
  to: string;
  label: string;
  icon: 'upload' | 'files' | 'settings' | 'admin';
  /** Paths (besides `to`) under which the tab shows as the current one. */
  covers: string[];
}

/**
 * Issue 11 item 6: on a phone the sidebar gives way to a bottom bar within reach of a thumb.
 * Invites Given and the other admin screens stay one tap away through the section tabs below.
 */
export function bottomTabs(role: RoleName | undefined): BottomTab[] {
  const tabs: BottomTab[] = [
    { to: '/dashboard', label: 'Upload', icon: 'upload', covers: [] },
    { to: '/uploaded', label: 'Files', icon: 'files', covers: [] },
    { to: '/settings', label: 'Settings', icon: 'settings', covers: ['/invites'] },
  ];
  if (role === 'admin' || role === 'mod') tabs.push({ to: '/admin/uploaded', label: 'Admin', icon: 'admin', covers: ['/admin/'] });
  return tabs;
}

export function tabIsCurrent(tab: BottomTab, pathname: string): boolean {
  return pathname === tab.to || tab.covers.some((c) => (c.endsWith('/') ? pathname.startsWith(c) : pathname === c));
}

/** The sidebar section holding the current screen, when it has more than one screen to switch between. */
export function sectionTabs(role: RoleName | undefined, pathname: string): SidebarSection | null {
  const section = sidebarSections(role).find((s) => s.links.some((l) => l.to === pathname));
  if (!section || section.title === 'Main' || section.links.length < 2) return null;
  return section;
}
