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
