import { useCallback, useState, type FormEvent } from 'react';
import { call, errorMessage } from '../../lib/api-client.ts';
import { formatMaxFileSize } from '../../lib/format.ts';
import { notifyError, notifySuccess } from '../../lib/notify.ts';
import type { adminSetMaxFileSize } from '../../../contract/admin.ts';
import type { utilsSettings } from '../../../contract/utils.ts';
import { useLoader } from '../../lib/use-loader.ts';
import { GENERAL_FAILURE } from './admin-types.ts';

// Spec §3: max_file_size is in MB; the server takes 1 MB up to 1 TB.
const MAX_MB = 1_048_576;

export function MaxFileSizeForm() {
  const load = useCallback(() => call<typeof utilsSettings>('/api/v1/utils/settings', {}), []);
  const { data, reload } = useLoader(load);
  const [value, setValue] = useState('');
  const [problem, setProblem] = useState<string | null>(null);
  const current = data?.settings.max_file_size;

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    const mb = Number(value);
    if (value.trim() === '' || !Number.isInteger(mb) || mb < 1 || mb > MAX_MB) {
      setProblem(`Enter a whole number of MB from 1 to ${MAX_MB}.`);
      return;
    }
    try {
      await call<typeof adminSetMaxFileSize>('/api/v1/admin/set/maxfilesize', { value: mb });
      notifySuccess(`Maximum file size is now ${formatMaxFileSize(mb)}.`);
      setValue('');
      reload();
    } catch (err) {
      notifyError(errorMessage(err, GENERAL_FAILURE));
    }
  };

  return (
    <section className="card admin-section" aria-labelledby="max-size-title">
      <h2 id="max-size-title">Maximum file size</h2>
      <p>Current: {current === undefined ? '…' : formatMaxFileSize(current)}</p>
      <form className="admin-inline-form" onSubmit={(e) => void submit(e)} noValidate>
        <label htmlFor="max-size-input">New maximum (MB)</label>
        <input
          id="max-size-input"
          className="input"
          type="number"
          min={1}
          max={MAX_MB}
          step={1}
          inputMode="numeric"
          placeholder={current === undefined ? '' : String(current)}
          value={value}
          onChange={(e) => {
            setValue(e.target.value);
            setProblem(null);
          }}
          aria-invalid={problem ? true : undefined}
          aria-describedby={problem ? 'max-size-problem' : undefined}
        />
        <button type="submit" className="btn btn-primary">
          Save
        </button>
      </form>
      {problem && (
        <p id="max-size-problem" className="admin-field-error" role="alert">
          {problem}
        </p>
      )}
    </section>
  );
}
