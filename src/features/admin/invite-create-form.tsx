import { useState, type FormEvent } from 'react';
import { call, errorMessage } from '../../lib/api-client.ts';
import { notifyError, notifySuccess } from '../../lib/notify.ts';
import type { adminCreateInvites } from '../../../contract/admin.ts';
import { GENERAL_FAILURE } from './admin-types.ts';
import { InviteKeyRow } from '../../components/invite-key-row.tsx';
import { useRuntimeConfig } from '../../lib/runtime-config.ts';

// Spec §5: the count has a minimum of 1; the server takes at most 100 per call.
const MAX_COUNT = 100;

/** Creates invite keys and lists the new ones so the admin can hand them out. */
export function InviteCreateForm({ onCreated }: { onCreated: () => void }) {
  const [count, setCount] = useState('1');
  const [problem, setProblem] = useState<string | null>(null);
  const [keys, setKeys] = useState<string[]>([]);
  const [busy, setBusy] = useState(false);
  const { siteName } = useRuntimeConfig();

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    const n = Number(count);
    if (!Number.isInteger(n) || n < 1 || n > MAX_COUNT) {
      setProblem(`Enter a whole number from 1 to ${MAX_COUNT}.`);
      return;
    }
    setBusy(true);
    try {
      const res = await call<typeof adminCreateInvites>('/api/v1/admin/create/invites', { count: n });
      setKeys(res.inviteKeys);
      notifySuccess(res.inviteKeys.length === 1 ? 'Created 1 invite key.' : `Created ${res.inviteKeys.length} invite keys.`);
      onCreated();
    } catch (err) {
      notifyError(errorMessage(err, GENERAL_FAILURE));
    } finally {
      setBusy(false);
    }
  };

  return (
    <div className="card admin-create">
      <form className="admin-inline-form" onSubmit={(e) => void submit(e)} aria-label="Create invite keys" noValidate>
        <label htmlFor="invite-count">Number of invite keys</label>
        <input
          id="invite-count"
          className="input"
          type="number"
          min={1}
          max={MAX_COUNT}
          step={1}
          inputMode="numeric"
          value={count}
          onChange={(e) => {
            setCount(e.target.value);
            setProblem(null);
          }}
          aria-invalid={problem ? true : undefined}
          aria-describedby={problem ? 'invite-count-problem' : undefined}
        />
        <button type="submit" className="btn btn-primary" disabled={busy}>
          Create
        </button>
      </form>
      {problem && (
        <p id="invite-count-problem" className="admin-field-error" role="alert">
          {problem}
        </p>
      )}
      {keys.length > 0 && (
        <div className="admin-new-keys">
          <h2 id="new-keys-title">New invite keys</h2>
          <ul className="invite-keys" aria-labelledby="new-keys-title">
            {keys.map((k) => (
              <InviteKeyRow key={k} inviteKey={k} siteName={siteName} />
            ))}
          </ul>
        </div>
      )}
    </div>
  );
}
