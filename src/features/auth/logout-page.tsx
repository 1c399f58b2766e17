import { useCallback, useEffect, useRef, useState } from 'react';
import { Link, useNavigate } from 'react-router-dom';
import type { authLogout } from '../../../contract/auth.ts';
import { call } from '../../lib/api-client.ts';
import { useSession } from '../../lib/session.tsx';
import { getToken } from '../../lib/token.ts';
import { getUploader } from '../../upload/page/instance.ts';
import { isPending } from '../../upload/uploader.ts';

/**
 * Spec §2 /logout: clears the stored token and goes to /; revoking it server-side (design §6) is
 * best effort. Issue 11 item 1: with uploads still queued, it first asks whether to keep them on
 * this device for the user's next sign-in or discard them; either way nobody else sees or sends
 * them.
 */
export function LogoutPage() {
  const { signOut } = useSession();
  const navigate = useNavigate();
  const [pending, setPending] = useState<number | null>(null);
  const started = useRef(false);

  const finish = useCallback(
    async (keep: boolean) => {
      const had = getToken();
      // Before the token is revoked: the queue stops sending with it (and discards, if asked).
      await getUploader()
        .signOut(keep)
        .catch((err: unknown) => console.error('The upload queue did not sign out', err));
      if (had) void call<typeof authLogout>('/api/v1/auth/logout', { token: had }).catch(() => undefined);
      signOut();
      navigate('/', { replace: true });
    },
    [signOut, navigate],
  );

  useEffect(() => {
    if (started.current) return;
    started.current = true;
    if (!getToken()) {
      void finish(true);
      return;
    }
    getUploader()
      .list()
      .then((items) => {
        const count = items.filter(isPending).length;
        if (count === 0) void finish(true);
        else setPending(count);
      })
      .catch(() => void finish(true));
  }, [finish]);

  if (pending === null) return <p role="status">Signing out…</p>;
  const uploads = pending === 1 ? '1 upload that has' : `${pending} uploads that have`;
  return (
    <section className="card" aria-labelledby="logout-title">
      <h1 id="logout-title" className="page-title">
        Sign out
      </h1>
      <p>
        You have {uploads} not finished. Keep {pending === 1 ? 'it' : 'them'} on this device for your next sign-in, or discard them? Nobody else who signs in here will see
        or send them.
      </p>
      <div className="row">
        <button type="button" className="btn btn-primary" onClick={() => void finish(true)}>
          Keep for my next sign-in
        </button>
        <button type="button" className="btn btn-danger" onClick={() => void finish(false)}>
          Discard uploads
        </button>
        <Link to="/dashboard" className="btn">
          Stay signed in
        </Link>
      </div>
    </section>
  );
}
