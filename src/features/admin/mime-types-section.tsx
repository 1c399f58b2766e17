import { useCallback, useEffect, useRef, useState, type FormEvent } from 'react';
import { call, errorMessage } from '../../lib/api-client.ts';
import { notifyError, notifySuccess } from '../../lib/notify.ts';
import { useConfirm } from '../../components/confirm-dialog.tsx';
import { useFocusAfterRemoval } from '../../components/use-focus-after-removal.ts';
import type { adminAddMimeTypes, adminDeleteMimeType, adminMimeTypes } from '../../../contract/admin.ts';
import { MIME_PATTERN } from '../../../contract/mime-pattern.ts';
import { ErrorBanner } from './error-banner.tsx';
import { useLoader } from '../../lib/use-loader.ts';
import { GENERAL_FAILURE } from './admin-types.ts';

const MIME_RULE = new RegExp(MIME_PATTERN);

/** Allowed MIME types (design §7: `type/subtype` or `type/*`; an empty list allows nothing). */
export function MimeTypesSection() {
  const confirm = useConfirm();
  const load = useCallback(() => call<typeof adminMimeTypes>('/api/v1/admin/get/mimetypes', {}), []);
  const loaded = useLoader(load);
  const [list, setList] = useState<string[]>([]);
  const [input, setInput] = useState('');
  const [problem, setProblem] = useState<string | null>(null);
  const heading = useRef<HTMLHeadingElement>(null);
  const focusAfterRemoval = useFocusAfterRemoval(heading, list);

  useEffect(() => {
    if (loaded.data) setList(loaded.data.mimetypes);
  }, [loaded.data]);

  const add = async (e: FormEvent) => {
    e.preventDefault();
    const entries = input
      .split(',')
      .map((s) => s.trim().toLowerCase())
      .filter(Boolean);
    const bad = entries.filter((m) => !MIME_RULE.test(m));
    if (entries.length === 0 || bad.length > 0) {
      setProblem(bad.length > 0 ? `Not a MIME type: ${bad.join(', ')}` : 'Enter one or more MIME types, separated by commas.');
      return;
    }
    try {
      const res = await call<typeof adminAddMimeTypes>('/api/v1/admin/update/mimetypes', { mimeTypes: entries.join(',') });
      setList(res.mimetypes);
      setInput('');
      notifySuccess(entries.length === 1 ? `Added ${entries[0]}.` : `Added ${entries.length} MIME types.`, { short: true });
    } catch (err) {
      notifyError(errorMessage(err, GENERAL_FAILURE));
    }
  };

  const remove = async (mime: string) => {
    if (!(await confirm(`Stop allowing ${mime}?`, { confirmLabel: 'Delete', danger: true }))) return;
    try {
      const res = await call<typeof adminDeleteMimeType>('/api/v1/admin/delete/mimetypes', { mimeType: mime });
      focusAfterRemoval();
      setList(res.mimetypes);
      notifySuccess(`Removed ${mime}.`, { short: true });
    } catch (err) {
      notifyError(errorMessage(err, GENERAL_FAILURE));
    }
  };

  return (
    <section className="card admin-section" aria-labelledby="mime-title">
      <h2 ref={heading} id="mime-title">Allowed MIME types</h2>
      <ErrorBanner error={loaded.error} />
      <form className="admin-inline-form" onSubmit={(e) => void add(e)} noValidate>
        <label htmlFor="mime-input">Add MIME types (comma-separated)</label>
        <input
          id="mime-input"
          className="input"
          type="text"
          placeholder="image/png, video/*"
          value={input}
          onChange={(e) => {
            setInput(e.target.value);
            setProblem(null);
          }}
          aria-invalid={problem ? true : undefined}
          aria-describedby={problem ? 'mime-problem' : undefined}
        />
        <button type="submit" className="btn btn-primary">
          Add
        </button>
      </form>
      {problem && (
        <p id="mime-problem" className="admin-field-error" role="alert">
          {problem}
        </p>
      )}
      {loaded.data && list.length === 0 && <p>No types are allowed: every upload will be refused.</p>}
      <ul className="admin-chips" aria-label="Allowed MIME types">
        {list.map((m) => (
          <li key={m} className="admin-chip">
            <code>{m}</code>
            <button type="button" className="btn btn-small" onClick={() => void remove(m)} aria-label={`Delete ${m}`}>
              ×
            </button>
          </li>
        ))}
      </ul>
    </section>
  );
}
