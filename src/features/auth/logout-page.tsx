import { useEffect } from 'react';
import { useNavigate } from 'react-router-dom';
import type { authLogout } from '../../../contract/auth.ts';
import { call } from '../../lib/api-client.ts';
import { useSession } from '../../lib/session.tsx';
import { getToken } from '../../lib/token.ts';

/** Spec §2 /logout: clears the stored token and goes to /; revoking it server-side (design §6) is best effort. */
export function LogoutPage() {
  const { signOut } = useSession();
  const navigate = useNavigate();
  useEffect(() => {
    const had = getToken();
    if (had) void call<typeof authLogout>('/api/v1/auth/logout', { token: had }).catch(() => undefined);
    signOut();
    navigate('/', { replace: true });
  }, [signOut, navigate]);
  return <p role="status">Signing out…</p>;
}
