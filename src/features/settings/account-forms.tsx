import { useState, type FormEvent } from 'react';
import type { utilsChangePassword, utilsChangeUser } from '../../../contract/utils.ts';
import { call, toApiError } from '../../lib/api-client.ts';
import { notifySuccess } from '../../lib/notify.ts';
import { useSession } from '../../lib/session.tsx';
import { Banner } from '../../components/banner.tsx';
import { passwordProblem, usernameProblem } from '../../../contract/account-rules.ts';

export const MSG_USERNAME_FAILED = 'Error updating username.';
export const MSG_PASSWORD_FAILED = 'Error updating password.';
export const MSG_PASSWORDS_DIFFER = 'Passwords do not match';

/** Spec §8 message first, then the server's reason when it gave one (e.g. the name is taken). */
function failure(base: string, err: unknown): string {
  const e = toApiError(err);
  return e.fromServer ? `${base} ${e.message}` : base;
}

export function ChangeUsernameForm() {
  const { user, refresh } = useSession();
  const [name, setName] = useState('');
  const [error, setError] = useState('');
  const [busy, setBusy] = useState(false);

  async function submit(e: FormEvent) {
    e.preventDefault();
    setError('');
    const problem = usernameProblem(name.trim());
    if (problem) {
      setError(`${MSG_USERNAME_FAILED} ${problem}`);
      return;
    }
    setBusy(true);
    try {
      const res = await call<typeof utilsChangeUser>('/api/v1/utils/changeuser', { newUsername: name.trim() });
      notifySuccess(res.message || 'Username updated');
      setName('');
      await refresh();
    } catch (err) {
      setError(failure(MSG_USERNAME_FAILED, err));
    } finally {
      setBusy(false);
    }
  }

  return (
    <section className="card" aria-labelledby="username-title">
      <h2 id="username-title">Change username</h2>
      {user && <p className="hint">Current username: {user.username}</p>}
      <form className="stack" onSubmit={submit}>
        <div className="field">
          <label htmlFor="new-username">New username</label>
          <input id="new-username" className="input" autoComplete="username" required value={name} onChange={(e) => setName(e.target.value)} />
        </div>
        <Banner kind="error" text={error} />
        <div>
          <button type="submit" className="btn btn-primary" disabled={busy || !name.trim()}>
            Update username
          </button>
        </div>
      </form>
    </section>
  );
}

export function ChangePasswordForm() {
  const [current, setCurrent] = useState('');
  const [next, setNext] = useState('');
  const [confirmValue, setConfirmValue] = useState('');
  const [error, setError] = useState('');
  const [busy, setBusy] = useState(false);

  async function submit(e: FormEvent) {
    e.preventDefault();
    setError('');
    if (next !== confirmValue) {
      setError(MSG_PASSWORDS_DIFFER); // spec §5
      return;
    }
    const problem = passwordProblem(next);
    if (problem) {
      setError(`${MSG_PASSWORD_FAILED} ${problem}`);
      return;
    }
    setBusy(true);
    try {
      const res = await call<typeof utilsChangePassword>('/api/v1/utils/changepassword', { currentPassword: current, newPassword: next });
      notifySuccess(res.message || 'Password updated');
      setCurrent('');
      setNext('');
      setConfirmValue('');
    } catch (err) {
      setError(failure(MSG_PASSWORD_FAILED, err));
    } finally {
      setBusy(false);
    }
  }

  return (
    <section className="card" aria-labelledby="password-title">
      <h2 id="password-title">Change password</h2>
      <form className="stack" onSubmit={submit}>
        <div className="field">
          <label htmlFor="current-password">Current password</label>
          <input id="current-password" className="input" type="password" autoComplete="current-password" required value={current} onChange={(e) => setCurrent(e.target.value)} />
        </div>
        <div className="field">
          <label htmlFor="new-password">New password</label>
          <input id="new-password" className="input" type="password" autoComplete="new-password" required value={next} onChange={(e) => setNext(e.target.value)} />
        </div>
        <div className="field">
          <label htmlFor="confirm-password">Confirm new password</label>
          <input
            id="confirm-password"
            className="input"
            type="password"
            autoComplete="new-password"
            required
            value={confirmValue}
            onChange={(e) => setConfirmValue(e.target.value)}
          />
        </div>
        <Banner kind="error" text={error} />
        <div>
          <button type="submit" className="btn btn-primary" disabled={busy || !current || !next || !confirmValue}>
            Update password
          </button>
        </div>
      </form>
    </section>
  );
}
