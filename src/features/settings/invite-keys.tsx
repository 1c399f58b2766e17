import { useCallback, useEffect, useState } from 'react';
import type { ResponseOf } from '../../../contract/common.ts';
import type { utilsGenerateInvite, utilsInviteLimit } from '../../../contract/utils.ts';
import { Link } from 'react-router-dom';
import { InviteKeyRow } from '../../components/invite-key-row.tsx';
import { useRuntimeConfig } from '../../lib/runtime-config.ts';
import { call, errorMessage } from '../../lib/api-client.ts';
import { formatDate } from '../../lib/format.ts';
import { notifyError, notifySuccess } from '../../lib/notify.ts';
import { loadFailureText, useRetryUnreachable } from '../../lib/use-retry-unreachable.ts';

/** Weekly invite keys (design §6: counted since Monday 00:00 UTC; the limit messages are the server's, spec §8). */
export function InviteKeysSection() {
  const [limit, setLimit] = useState<ResponseOf<typeof utilsInviteLimit> | null>(null);
  const [generated, setGenerated] = useState<string[]>([]);
  const [busy, setBusy] = useState(false);
  const { siteName } = useRuntimeConfig();
  // Issue 11 item 12: nothing left this week means the button cannot be pressed, and says why.
  const noneLeft = limit !== null && limit.remainingInvites <= 0;

  // Offline or unanswered, it says so and asks again by itself: "Loading…" stayed for good.
  const [failure, setFailure] = useState('');
  const retry = useRetryUnreachable(() => void load());
  const load = useCallback(async () => {
    try {
      setLimit(await call<typeof utilsInviteLimit>('/api/v1/utils/invites/invite-limit', {}));
      setFailure('');
      retry.settled();
    } catch (err) {
      console.error('Could not load the invite limit', err);
      setFailure(loadFailureText(err, 'your weekly invite allowance'));
      retry.after(err);
    }
  }, [retry]);

  useEffect(() => {
    void load();
  }, [load]);

  async function generate() {
    setBusy(true);
    try {
      const res = await call<typeof utilsGenerateInvite>('/api/v1/utils/invites', {});
      setGenerated((g) => [res.inviteKey, ...g]);
      notifySuccess(res.message || 'Invite key generated', { short: true });
      await load();
    } catch (err) {
      notifyError(errorMessage(err, 'An internal error occurred.'));
      // A refusal by the weekly limit (spec §8) means the count shown was out of date (keys made
      // on another device): read it again so the screen stops offering a key it cannot give.
      await load();
    } finally {
      setBusy(false);
    }
  }

  return (
    <section className="card" aria-labelledby="invitekeys-title">
      <h2 id="invitekeys-title">Invite keys</h2>
      {limit ? (
        <p>
          You can generate <strong>{limit.remainingInvites}</strong> more invite {limit.remainingInvites === 1 ? 'key' : 'keys'} this week
          (of {limit.invitesAllowed}). The count resets on {formatDate(limit.resetsAt)}.
        </p>
      ) : (
        <p className="hint">{failure || 'Loading your weekly invite allowance…'}</p>
      )}
      {/* Above the buttons: under them it read as a note on "Invites Given", not on the greyed Generate. */}
      {noneLeft && (
        <p id="invitekeys-none-left" className="hint">
          You have used all of this week&apos;s invite keys.
        </p>
      )}
      <div className="row">
        <button
          type="button"
          className="btn btn-primary"
          disabled={busy || noneLeft}
          aria-describedby={noneLeft ? 'invitekeys-none-left' : undefined}
          onClick={() => void generate()}
        >
          Generate invite key
        </button>
        <Link to="/invites" className="btn">
          Invites Given
        </Link>
      </div>
      {generated.length > 0 && (
        <ul className="invite-keys">
          {generated.map((k) => (
            <InviteKeyRow key={k} inviteKey={k} siteName={siteName} />
          ))}
        </ul>
      )}
    </section>
  );
}
