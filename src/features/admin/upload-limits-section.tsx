import { useCallback, useEffect, useRef, useState, type FormEvent } from 'react';
import type { Static } from 'typebox';
import { call, errorMessage } from '../../lib/api-client.ts';
import { notifyError, notifySuccess } from '../../lib/notify.ts';
import type { LimitName, UploadLimits, adminDeleteStorageQuota, adminLimits, adminSetLimit, adminSetStorageQuota } from '../../../contract/admin.ts';
import { ErrorBanner } from './error-banner.tsx';
import { useLoader } from '../../lib/use-loader.ts';
import { GENERAL_FAILURE } from './admin-types.ts';

type Limits = Static<typeof UploadLimits>;
type Role = keyof Limits['storage_quota'];

// The server's bounds (contract/admin.ts): limits 1 .. 1,048,576; quotas 1 .. 1,073,741,824 MB.
const MAX_LIMIT = 1_048_576;
const MAX_QUOTA = 1_073_741_824;

const LIMITS: { name: Static<typeof LimitName>; label: string; unit: string }[] = [
  { name: 'max_unfinished_uploads', label: 'Unfinished uploads per user', unit: 'uploads' },
  { name: 'max_unfinished_size', label: 'Unfinished upload size per user', unit: 'MB' },
  { name: 'max_url_fetches', label: 'URL uploads at once per user', unit: 'fetches' },
];
const ROLES: Role[] = ['default', 'trusted', 'mod', 'admin'];

/** One number, validated here before the server sees it; `allowEmpty` means "unlimited". */
function NumberForm(props: {
  id: string;
  label: string;
  initial: string;
  min: number;
  max: number;
  allowEmpty?: boolean;
  save: (value: number | null) => Promise<void>;
}) {
  const [value, setValue] = useState(props.initial);
  const [problem, setProblem] = useState<string | null>(null);
  // The field follows the server's value when it changes (a save read back). Keyed on the value,
  // the form was drawn anew instead, and focus, in the field Enter was pressed in, went nowhere.
  const shown = useRef(props.initial);
  useEffect(() => {
    if (shown.current === props.initial) return;
    shown.current = props.initial;
    setValue(props.initial);
  }, [props.initial]);

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    const trimmed = value.trim();
    const n = Number(trimmed);
    if (trimmed === '' && props.allowEmpty) {
      await props.save(null);
      return;
    }
    if (trimmed === '' || !Number.isInteger(n) || n < props.min || n > props.max) {
      setProblem(`Enter a whole number from ${props.min} to ${props.max}${props.allowEmpty ? ', or leave it empty for no limit' : ''}.`);
      return;
    }
    await props.save(n);
  };

  return (
    <form className="admin-inline-form" onSubmit={(e) => void submit(e)} noValidate>
      <label htmlFor={props.id}>{props.label}</label>
      <input
        id={props.id}
        className="input"
        type="number"
        min={props.min}
        max={props.max}
        step={1}
        inputMode="numeric"
        placeholder={props.allowEmpty ? 'Unlimited' : undefined}
        value={value}
        onChange={(e) => {
          setValue(e.target.value);
          setProblem(null);
        }}
        aria-invalid={problem ? true : undefined}
        aria-describedby={problem ? `${props.id}-problem` : undefined}
      />
      <button type="submit" className="btn" aria-label={`Save ${props.label}`}>
        Save
      </button>
      {problem && (
        <p id={`${props.id}-problem`} className="admin-field-error" role="alert">
          {problem}
        </p>
      )}
    </form>
  );
}

/**
 * Design §6 per-user bounds (issue 8 item 4): how much one account may hold open, and a storage
 * quota per role (empty = unlimited, the default).
 */
export function UploadLimitsSection() {
  const load = useCallback(() => call<typeof adminLimits>('/api/v1/admin/get/limits', {}), []);
  const { data, error, reload } = useLoader(load);
  const limits = data?.limits;

  const guarded = (work: () => Promise<string>) => async () => {
    try {
      notifySuccess(await work(), { short: true });
      reload();
    } catch (err) {
      notifyError(errorMessage(err, GENERAL_FAILURE));
    }
  };

  return (
    <section className="card admin-section" aria-labelledby="upload-limits-title">
      <h2 id="upload-limits-title">Upload limits</h2>
      <ErrorBanner error={error} />
      {limits && (
        <>
          {LIMITS.map((l) => (
            <NumberForm
              key={l.name}
              id={`limit-${l.name}`}
              label={`${l.label} (${l.unit})`}
              initial={String(limits[l.name])}
              min={1}
              max={MAX_LIMIT}
              save={(value) =>
                guarded(async () => {
                  await call<typeof adminSetLimit>('/api/v1/admin/set/limit', { setting: l.name, value: value ?? 1 });
                  return `${l.label} is now ${value} ${l.unit}.`;
                })()
              }
            />
          ))}
          <h3>Storage quota per role (MB)</h3>
          {ROLES.map((role) => (
            <NumberForm
              key={`quota-${role}`}
              id={`quota-${role}`}
              label={`${role} quota`}
              initial={limits.storage_quota[role] === null ? '' : String(limits.storage_quota[role])}
              min={1}
              max={MAX_QUOTA}
              allowEmpty
              save={(value) =>
                guarded(async () => {
                  if (value === null) {
                    await call<typeof adminDeleteStorageQuota>('/api/v1/admin/delete/storagequota', { roleName: role });
                    return `${role} has no storage quota now.`;
                  }
                  await call<typeof adminSetStorageQuota>('/api/v1/admin/set/storagequota', { roleName: role, quotaMb: value });
                  return `${role} may now store ${value} MB.`;
                })()
              }
            />
          ))}
        </>
      )}
    </section>
  );
}
