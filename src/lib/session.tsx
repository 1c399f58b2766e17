import { createContext, useCallback, useContext, useEffect, useMemo, useState, type ReactNode } from 'react';
import { useNavigate } from 'react-router-dom';
import type { authData } from '../../contract/auth.ts';
import type { RoleName } from '../../contract/common.ts';
import { toApiError } from './api-errors.ts';
import { clearNotices } from './notify.ts';
import { clearToken, getToken, setToken } from './token.ts';

export interface SessionUser {
  username: string;
  role: RoleName;
}

export interface Session {
  user: SessionUser | null;
  isAdmin: boolean;
  /** Exactly the mod role (an admin is `isAdmin`, not `isMod`): design §6 gives mods All files only. */
  isMod: boolean;
  /** True while a stored token is being checked; screens render nothing meanwhile. */
  loading: boolean;
  /** Set when the server reported maintenance mode (design §6) so the layout can say why calls fail. */
  maintenance: boolean;
  refresh(): Promise<void>;
  /** Stores a fresh login token and loads the user behind it. */
  signIn(token: string): Promise<void>;
  /** Forgets the token locally (the server call is /logout's business). */
  signOut(): void;
}

const SessionContext = createContext<Session | null>(null);

/**
 * Spec §4's rule for a failed `auth/data`: the server said `success: false` (bad, expired or
 * revoked token, banned user), or the request timed out (ECONNABORTED) → the token goes and the
 * user goes to /login. Any other request error (offline, 5xx, rate limit) is not acted on, so a
 * flaky network never signs anyone out.
 */
export function shouldDropSession(err: unknown): boolean {
  const e = toApiError(err);
  if (e.code === 'ECONNABORTED') return true;
  return e.success === false && e.status < 500 && e.status !== 429;
}

/**
 * Issue 11 item 1: the upload queue files what it is given under the signed-in user. Its own
 * lookup can miss on a connection that drops right after sign-in; this answer already names them.
 * Loaded on demand, as the queue is: only signed-in pages get here.
 */
function tellUploader(token: string, userId: string): void {
  void import('../upload/page/instance.ts')
    .then(({ getUploader }) => getUploader().signedInAs(token, userId))
    .catch((error: unknown) => console.error('The upload queue did not learn who is signed in', error));
}

export function SessionProvider({ children }: { children: ReactNode }) {
  const navigate = useNavigate();
  const [user, setUser] = useState<SessionUser | null>(null);
  const [maintenance, setMaintenance] = useState(false);
  const [loading, setLoading] = useState(() => getToken() !== null);

  const refresh = useCallback(async () => {
    if (!getToken()) {
      setUser(null);
      setLoading(false);
      return;
    }
    setLoading(true);
    const token = getToken();
    // An answer about a token that is no longer stored (signed out, or in as someone else, while
    // it was on its way) is about nobody: taken, it signed the last user back in after /logout.
    const stale = () => getToken() !== token;
    try {
      // Loaded with the first check, not with the page: a visitor without a token never needs
      // the HTTP client (axios) to see a public page (issue 9).
      const { call } = await import('./api-client.ts');
      const data = await call<typeof authData>('/api/v1/auth/data', {});
      if (stale()) return;
      setUser({ username: data.user.username, role: data.user.role });
      if (token) tellUploader(token, data.user._id);
      setMaintenance(Boolean(data.maintenance));
    } catch (err) {
      if (!stale() && shouldDropSession(err)) {
        clearToken();
        setUser(null);
        navigate('/login', { replace: true });
      }
    } finally {
      if (!stale()) setLoading(false);
    }
  }, [navigate]);

  useEffect(() => {
    // The one check per page load of spec §4 ("user data is not yet loaded").
    void refresh();
  }, [refresh]);

  const signIn = useCallback(
    async (token: string) => {
      setToken(token);
      // Whoever was known before is not who this token belongs to: nothing of theirs may show
      // while the new account is read.
      setUser(null);
      await refresh();
    },
    [refresh],
  );

  const signOut = useCallback(() => {
    clearToken();
    clearNotices();
    setUser(null);
    // A check still on its way is now stale and will not end the wait itself.
    setLoading(false);
  }, []);

  const value = useMemo<Session>(
    () => ({
      user,
      isAdmin: user?.role === 'admin',
      isMod: user?.role === 'mod',
      // Only the first check blanks the screens. A re-check of a known user (after a username
      // change) keeps them: unmounting the signed-in screen lost what it held (the invite keys
      // just generated, the form's focus) and flashed a blank page over a slow connection.
      loading: loading && user === null,
      maintenance,
      refresh,
      signIn,
      signOut,
    }),
    [user, loading, maintenance, refresh, signIn, signOut],
  );
  return <SessionContext.Provider value={value}>{children}</SessionContext.Provider>;
}

export function useSession(): Session {
  const s = useContext(SessionContext);
  if (!s) throw new Error('useSession must be used inside <SessionProvider>');
  return s;
}

/** For tests and previews: a fixed session without any server. */
export function StaticSessionProvider({ value, children }: { value: Partial<Session>; children: ReactNode }) {
  const full: Session = {
    user: null,
    isAdmin: value.user?.role === 'admin',
    isMod: value.user?.role === 'mod',
    loading: false,
    maintenance: false,
    refresh: async () => {},
    signIn: async () => {},
    signOut: () => {},
    ...value,
  };
  return <SessionContext.Provider value={full}>{children}</SessionContext.Provider>;
}
