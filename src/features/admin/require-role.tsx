import type { ReactNode } from 'react';
import { Navigate } from 'react-router-dom';
import { useSession } from '../../lib/session.tsx';

type Role = 'default' | 'trusted' | 'mod' | 'admin';

/**
 * Admin screens guard themselves (spec §2: admin pages send non-admins to /dashboard). Which
 * roles pass is design §6: admin everywhere, mod only on All files. Nothing renders while the
 * session is still loading, so a mod never sees an admin screen flash before the redirect.
 */
export function RequireRole({ allow, children }: { allow: readonly Role[]; children: ReactNode }) {
  const { user, loading } = useSession();
  if (loading) return null;
  if (!user || !allow.includes(user.role)) return <Navigate to="/dashboard" replace />;
  return <>{children}</>;
}
