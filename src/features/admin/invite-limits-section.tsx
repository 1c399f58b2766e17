import { useCallback, useEffect, useRef, useState, type FormEvent } from 'react';
import { call, errorMessage } from '../../lib/api-client.ts';
import { notifyError, notifySuccess } from '../../lib/notify.ts';
import type { adminRoles, adminSetUploadLimit } from '../../../contract/admin.ts';
import { ErrorBanner } from './error-banner.tsx';
import { useLoader } from '../../lib/use-loader.ts';
import { GENERAL_FAILURE, type RoleRow } from './admin-types.ts';

// Spec §5/§9: the limit has a minimum of 0; the server stores at most this.
const MAX_LIMIT = 100_000;

function RoleLimitForm({ role, onSaved }: { role: RoleRow; onSaved: () => void }) {
  const [value, setValue] = useState(String(role.invites_allowed));
  const [problem, setProblem] = useState<string | null>(null);
  // The field follows the server's value when it changes (a save read back). Keyed on the value,
  // the form was drawn anew instead, and focus, in the field Enter was pressed in, went nowhere.
  const shown = useRef(role.invites_allowed);
  useEffect(() => {
    if (shown.current === role.invites_allowed) return;
    shown.current = role.invites_allowed;
    setValue(String(role.invites_allowed));
  }, [role.invites_allowed]);
  const id = `limit-${role.name}`;

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    const n = Number(value);
    if (value.trim() === '' || !Number.isInteger(n) || n < 0 || n > MAX_LIMIT) {
      setProblem(`Enter a whole number from 0 to ${MAX_LIMIT}.`);
      return;
    }
    try {
      await call<typeof adminSetUploadLimit>('/api/v1/admin/set/uploadlimit', { roleName: role.name, invitesAllowed: n });
      notifySuccess(`${role.name} may now create ${n} invite ${n === 1 ? 'key' : 'keys'} a week.`, { short: true });
      onSaved();
    } catch (err) {
      notifyError(errorMessage(err, GENERAL_FAILURE));
    }
  };

  return (
    <form className="admin-inline-form" onSubmit={(e) => void submit(e)} noValidate>
      <label htmlFor={id}>{role.name}</label>
      <input
        id={id}
        className="input"
        type="number"
        min={0}
        max={MAX_LIMIT}
        step={1}
        inputMode="numeric"
        value={value}
        onChange={(e) => {
          setValue(e.target.value);
          setProblem(null);
        }}
        aria-invalid={problem ? true : undefined}
        aria-describedby={problem ? `${id}-problem` : undefined}
      />
      <button type="submit" className="btn" aria-label={`Save the ${role.name} limit`}>
        Save
      </button>
      {problem && (
        <p id={`${id}-problem`} className="admin-field-error" role="alert">
          {problem}
        </p>
      )}
    </form>
  );
}

/** Weekly invite limit per role (spec §2 Site Settings, design §6: counted from Monday 00:00 UTC). */
export function InviteLimitsSection() {
  const load = useCallback(() => call<typeof adminRoles>('/api/v1/admin/get/roles', {}), []);
  const { data, error, reload } = useLoader(load);
  return (
    <section className="card admin-section" aria-labelledby="limits-title">
      <h2 id="limits-title">Weekly invite limit per role</h2>
      <ErrorBanner error={error} />
      {data?.roles.map((r) => <RoleLimitForm key={r._id} role={r} onSaved={reload} />)}
    </section>
  );
}
