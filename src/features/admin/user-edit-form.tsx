import { useRef, useState, type FormEvent } from 'react';
import { useFocusReturn } from '../../components/modal.ts';
import { call, errorMessage } from '../../lib/api-client.ts';
import { notifyError, notifySuccess } from '../../lib/notify.ts';
import type { adminUpdatePassword, adminUpdateUsername } from '../../../contract/admin.ts';
import { GENERAL_FAILURE, type AdminUserRow } from './admin-types.ts';
// Design §6: the same rules the server applies, checked first so a typo costs no round trip.
import { passwordProblem, usernameProblem } from '../../../contract/account-rules.ts';


interface Props {
  user: AdminUserRow;
  kind: 'rename' | 'password';
  onDone: (changed: boolean) => void;
}

/** Rename or reset the password of one user, shown above the table while open. */
export function UserEditForm({ user, kind, onDone }: Props) {
  const [value, setValue] = useState('');
  const [problem, setProblem] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const rename = kind === 'rename';
  const inputId = `admin-edit-${kind}`;
  const input = useRef<HTMLInputElement>(null);
  // Closing (done or cancelled) removes the field that had focus: it goes back to the button that
  // opened the form. The hook, not autoFocus, puts focus in the field, since autoFocus would
  // take it before the hook could note that button.
  useFocusReturn(input);

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    const problem = rename ? usernameProblem(value) : passwordProblem(value);
    if (problem) {
      setProblem(problem);
      return;
    }
    setBusy(true);
    try {
      if (rename) {
        await call<typeof adminUpdateUsername>('/api/v1/admin/update/username', { targetUserId: user._id, newUsername: value });
        notifySuccess(`${user.username} is now ${value}.`);
      } else {
        await call<typeof adminUpdatePassword>('/api/v1/admin/update/userpass', { userId: user._id, newPassword: value });
        notifySuccess(`The password of ${user.username} has been reset.`);
      }
      onDone(true);
    } catch (err) {
      setBusy(false);
      setProblem(errorMessage(err, GENERAL_FAILURE));
      notifyError(errorMessage(err, GENERAL_FAILURE));
    }
  };

  return (
    <form className="card admin-edit" onSubmit={(e) => void submit(e)} aria-label={rename ? `Rename ${user.username}` : `Reset password of ${user.username}`}>
      <label htmlFor={inputId}>{rename ? `New username for ${user.username}` : `New password for ${user.username}`}</label>
      <input
        ref={input}
        id={inputId}
        className="input"
        type={rename ? 'text' : 'password'}
        autoComplete={rename ? 'off' : 'new-password'}
        value={value}
        onChange={(e) => {
          setValue(e.target.value);
          setProblem(null);
        }}
        aria-invalid={problem ? true : undefined}
        aria-describedby={problem ? `${inputId}-problem` : undefined}
        required
      />
      {problem && (
        <p id={`${inputId}-problem`} className="admin-field-error" role="alert">
          {problem}
        </p>
      )}
      <div className="admin-actions">
        <button type="submit" className="btn btn-primary" disabled={busy}>
          {rename ? 'Rename' : 'Reset password'}
        </button>
        <button type="button" className="btn" onClick={() => onDone(false)}>
          Cancel
        </button>
      </div>
    </form>
  );
}
