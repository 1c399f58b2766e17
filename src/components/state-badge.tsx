/**
 * Issue 11 item 12: one colour per state, on every screen. Green for what is usable (an active
 * account, an invite still free), red for what is blocked, neutral for what is used up.
 */
export type BadgeState = 'Active' | 'Banned' | 'Unclaimed' | 'Claimed';

const TONE: Record<BadgeState, string> = {
  Active: 'badge badge-success',
  Banned: 'badge badge-danger',
  Unclaimed: 'badge badge-success',
  Claimed: 'badge',
};

export function StateBadge({ state }: { state: BadgeState }) {
  return <span className={TONE[state]}>{state}</span>;
}
