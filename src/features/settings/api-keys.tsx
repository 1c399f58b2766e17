import { useCallback, useEffect, useRef, useState } from 'react';
import type { authApiKeys, authApiKeysGenerate, authApiKeysRevoke } from '../../../contract/auth.ts';
import type { ResponseOf } from '../../../contract/common.ts';
import { CopyLink } from '../../components/copy-link.tsx';
import { useConfirm } from '../../components/confirm-dialog.tsx';
import { useFocusAfterRemoval } from '../../components/use-focus-after-removal.ts';
import { call, errorMessage } from '../../lib/api-client.ts';
import { notifyError, notifySuccess } from '../../lib/notify.ts';
import { loadFailureText, useRetryUnreachable } from '../../lib/use-retry-unreachable.ts';
import { useRuntimeConfig } from '../../lib/runtime-config.ts';
import { MSG_NO_API_KEY, buildSharexConfig, downloadSharexConfig, sharexFileName } from './sharex.ts';
import { Banner } from '../../components/banner.tsx';
import { formatDate } from '../../lib/format.ts';

type ApiKey = ResponseOf<typeof authApiKeys>['apiKeys'][number];

/** Shows the start and end of a key so keys can be told apart without putting them on screen. */
function masked(key: string): string {
  return key.length > 12 ? `${key.slice(0, 8)}…${key.slice(-4)}` : key;
}

export function ApiKeysSection() {
  const { apiUrl, siteName } = useRuntimeConfig();
  const confirm = useConfirm();
  // Null until the list has been read once: before that, "no keys" would be a guess.
  const [keys, setKeys] = useState<ApiKey[] | null>(null);
  const [error, setError] = useState('');
  const [busy, setBusy] = useState(false);
  const heading = useRef<HTMLHeadingElement>(null);
  const focusAfterRemoval = useFocusAfterRemoval(heading, keys);

  // A read that got no answer is tried again by itself (offline, the server unreachable).
  const retry = useRetryUnreachable(() => void load());
  const load = useCallback(async () => {
    try {
      const res = await call<typeof authApiKeys>('/api/v1/auth/apikeys', {});
      setKeys(res.apiKeys);
      setError('');
      retry.settled();
    } catch (err) {
      setError(loadFailureText(err, 'this list'));
      retry.after(err);
    }
  }, [retry]);

  useEffect(() => {
    void load();
  }, [load]);

  async function generate() {
    setBusy(true);
    try {
      await call<typeof authApiKeysGenerate>('/api/v1/auth/apikeys/generate', {});
      notifySuccess('API key generated', { short: true });
      await load();
    } catch (err) {
      notifyError(errorMessage(err, 'An internal error occurred.'));
    } finally {
      setBusy(false);
    }
  }

  async function revoke(key: ApiKey) {
    if (!(await confirm(`Revoke the API key ${masked(key.key)}? Tools using it will stop working.`, { confirmLabel: 'Revoke', danger: true }))) return;
    try {
      await call<typeof authApiKeysRevoke>('/api/v1/auth/apikeys/revoke', { apiKey: key._id });
      notifySuccess('API key revoked', { short: true });
      focusAfterRemoval();
      await load();
    } catch (err) {
      notifyError(errorMessage(err, 'An internal error occurred.'));
    }
  }

  function download(key: ApiKey | undefined) {
    if (!key) {
      notifyError(MSG_NO_API_KEY);
      return;
    }
    downloadSharexConfig(buildSharexConfig(apiUrl, key.key, siteName), sharexFileName(siteName));
  }

  return (
    <section className="card" aria-labelledby="apikeys-title">
      <h2 ref={heading} id="apikeys-title">API keys</h2>
      <p className="hint">API keys upload files for tools such as ShareX or curl. Treat them like passwords.</p>
      <Banner kind="error" text={error} />
      {keys === null ? null : keys.length === 0 ? (
        <p className="hint">You have no API keys.</p>
      ) : (
        <ul className="key-list">
          {keys.map((k, i) => (
            // One box per key, its name and value above its own actions: run together in one
            // wrapping row, which Revoke belonged to which key was a guess on a phone.
            <li key={k._id} className="key-row" aria-labelledby={`apikey-${k._id}`}>
              <p id={`apikey-${k._id}`} className="key-head">
                <span className="key-label">Key {i + 1}</span> <code className="key-value">{masked(k.key)}</code>{' '}
                <span className="hint">made {formatDate(k.createdAt)}</span>
              </p>
              <div className="row key-actions">
                <CopyLink url={k.key} asButton>
                  Copy key
                </CopyLink>
                <button type="button" className="btn btn-small" onClick={() => download(k)}>
                  ShareX config
                </button>
                <button type="button" className="btn btn-small btn-danger" onClick={() => void revoke(k)}>
                  Revoke
                </button>
              </div>
            </li>
          ))}
        </ul>
      )}
      <div className="row">
        <button type="button" className="btn btn-primary" disabled={busy} onClick={() => void generate()}>
          Generate API key
        </button>
        {/* Until the list is read there may well be keys: spec §5's 'Please generate an API key
            first.' would tell someone offline to make one they do not need. */}
        <button type="button" className="btn" disabled={keys === null} onClick={() => download(keys?.[0])}>
          Download ShareX config
        </button>
      </div>
    </section>
  );
}
