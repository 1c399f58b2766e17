import { useState, type FormEvent } from 'react';
import type { filesUploadUrl } from '../../../contract/files.ts';
import { CopyLink } from '../../components/copy-link.tsx';
import { call, errorMessage } from '../../lib/api-client.ts';
import { shareLink } from '../../lib/clipboard.ts';
import { notifyError, notifySuccess } from '../../lib/notify.ts';
import { useRuntimeConfig } from '../../lib/runtime-config.ts';
import { MSG_BAD_URL, MSG_URL_UPLOAD_FAILED, isValidUploadUrl } from './url-validation.ts';

/** Spec §2 'Upload via URL': the server fetches the address (design §7). */
export function UrlUpload() {
  const { filesUrl } = useRuntimeConfig();
  const [url, setUrl] = useState('');
  const [error, setError] = useState('');
  const [busy, setBusy] = useState(false);
  const [links, setLinks] = useState<string[]>([]);

  async function submit(e: FormEvent) {
    e.preventDefault();
    if (!isValidUploadUrl(url)) {
      setError(MSG_BAD_URL);
      return;
    }
    setError('');
    setBusy(true);
    try {
      const res = await call<typeof filesUploadUrl>('/api/v1/files/upload-url', { url: url.trim() });
      setLinks((l) => [shareLink(filesUrl || new URL(res.url).origin, res.url), ...l]);
      setUrl('');
      notifySuccess(res.message ?? 'File uploaded', { short: true });
    } catch (err) {
      notifyError(errorMessage(err, MSG_URL_UPLOAD_FAILED));
    } finally {
      setBusy(false);
    }
  }

  return (
    <div className="url-upload">
      <form className="row" onSubmit={submit} noValidate>
        <label htmlFor="upload-url" className="visually-hidden">
          File URL
        </label>
        <input
          id="upload-url"
          className="input url-input"
          type="url"
          inputMode="url"
          placeholder="https://example.com/picture.png"
          value={url}
          onChange={(e) => setUrl(e.target.value)}
          aria-invalid={error ? true : undefined}
          aria-describedby={error ? 'upload-url-error' : undefined}
        />
        <button type="submit" className="btn btn-primary" disabled={busy}>
          {busy ? 'Uploading…' : 'Upload'}
        </button>
      </form>
      {error && (
        <p id="upload-url-error" className="field-error" role="alert">
          {error}
        </p>
      )}
      {links.length > 0 && (
        <ul className="url-results">
          {links.map((l) => (
            <li key={l}>
              <CopyLink url={l} />
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}
