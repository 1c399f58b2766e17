import { useRef } from 'react';
import { useNavigate } from 'react-router-dom';
import { useSession } from '../../lib/session.tsx';
import { shareLink } from '../../lib/clipboard.ts';
import { formatFileSize } from '../../lib/format.ts';
import { notifyError } from '../../lib/notify.ts';
import { useRuntimeConfig } from '../../lib/runtime-config.ts';
import type { ShownState, UploadItem, Uploader } from '../../upload/uploader.ts';
import { FinishedActions } from './finished-actions.tsx';
import { percentOf } from './use-uploads.ts';
import { FileName } from '../../components/file-name.tsx';

const STATE_TEXT: Record<ShownState, string> = {
  // Issue 11 item 3: up to three files move at once; the rest wait their turn.
  waiting: 'Queued',
  preparing: 'Preparing',
  uploading: 'Uploading',
  paused: 'Paused',
  // Issue 11 item 5: say what the app waits for instead of offering a Resume that cannot work.
  offline: 'Offline: continues when the connection is back',
  failed: 'Failed',
  done: 'Done',
  interrupted: 'Not fully saved before the app closed',
  cancelled: 'Cancelled',
};

/** Retried by itself, with the server's reason (uploads switched off, maintenance, out of disk…). */
const isRetrying = (item: UploadItem) => item.state === 'uploading' && item.notice !== undefined;

function stateText(item: UploadItem): string {
  if (item.signInAgain) return 'Waiting for you to sign in again';
  if (isRetrying(item)) return 'Waiting to try again';
  // Issue 11 item 2: while the copy into browser storage runs, say how much of it is saved.
  if (item.state === 'preparing') return `Preparing: ${formatFileSize(item.savedBytes ?? 0)} saved on this device`;
  return STATE_TEXT[item.state];
}

/** Issue 11 item 2: an interrupted copy offers its file picker again. */
function ChooseAgain({ item, uploader }: { item: UploadItem; uploader: Uploader }) {
  const input = useRef<HTMLInputElement>(null);
  return (
    <>
      <button type="button" className="btn btn-small btn-primary" onClick={() => input.current?.click()}>
        Choose file again
      </button>
      <input
        ref={input}
        type="file"
        className="visually-hidden"
        tabIndex={-1}
        aria-label={`Choose ${item.name} again`}
        onChange={(e) => {
          const file = e.target.files?.[0];
          e.target.value = '';
          if (file) uploader.chooseAgain(item.id, file).catch((err: unknown) => notifyError(err instanceof Error ? err.message : 'Error uploading file'));
        }}
      />
    </>
  );
}

interface Props {
  items: UploadItem[];
  uploader: Uploader;
  /** A local picture of a file picked on this device, shown beside a finished upload (issue 11 item 8). */
  pictureOf?: (name: string, size: number) => string | null;
}

/**
 * The session ended under running uploads (signed out elsewhere, the password changed): they
 * wait with every byte sent kept. Said once above the list, with the way out, rather than a
 * "Queued" that never moves.
 */
function SessionEnded({ uploader }: { uploader: Uploader }) {
  const { signOut } = useSession();
  const navigate = useNavigate();
  const signInAgain = async () => {
    // Kept for the same account's next sign-in here (issue 11 item 1), as sign-out's "Keep" does.
    await uploader.signOut(true).catch((err: unknown) => console.error('The upload queue did not sign out', err));
    signOut();
    navigate('/login');
  };
  return (
    <div className="banner banner-warning upload-session-ended" role="alert">
      <p>Your session has ended. Sign in again and your uploads continue where they stopped.</p>
      <button type="button" className="btn btn-primary btn-small" onClick={() => void signInAgain()}>
        Sign in again
      </button>
    </div>
  );
}

/** One row per file: a progress bar (spec §4), and at 100 the link that copies on click. */
export function UploadList({ items, uploader, pictureOf }: Props) {
  const { filesUrl } = useRuntimeConfig();
  if (items.length === 0) return null;
  return (
    <section className="card" aria-labelledby="queue-title">
      <div className="row upload-list-head">
        <h2 id="queue-title">Uploads</h2>
        {items.some((i) => i.state === 'done') && (
          <button type="button" className="btn btn-small" onClick={() => void uploader.clearFinished()}>
            Clear finished
          </button>
        )}
      </div>
      {items.some((i) => i.signInAgain) && <SessionEnded uploader={uploader} />}
      <ul className="upload-list">
        {items.map((item) => {
          const pct = percentOf(item);
          const link = item.url ? shareLink(filesUrl || new URL(item.url).origin, item.url) : '';
          const moving = item.state === 'uploading' || item.state === 'waiting' || item.state === 'preparing';
          return (
            <li key={item.id} className="upload-item" data-state={item.state}>
              <div className="upload-item-head">
                <span className="upload-name" title={item.name}>
                  <FileName name={item.name} />
                </span>
                <span className="hint">
                  {formatFileSize(item.size)} · {stateText(item)} · {pct}%
                  {!item.persistent && item.state !== 'done' ? ' · lost if you leave this page' : ''}
                </span>
              </div>
              {item.state !== 'cancelled' && (
                <div
                  className="progress"
                  role="progressbar"
                  aria-label={`Upload progress of ${item.name}`}
                  aria-valuemin={0}
                  aria-valuemax={100}
                  aria-valuenow={pct}
                >
                  <div className="progress-bar" style={{ width: `${pct}%` }} />
                </div>
              )}
              {item.state === 'failed' && (
                <p className="field-error" role="alert">
                  {item.error ?? 'Error uploading file'}
                </p>
              )}
              {isRetrying(item) && (
                <p className="hint upload-notice" role="status">
                  Error: {item.notice}
                </p>
              )}
              {item.state === 'done' && item.notice && (
                <p className="field-error" role="alert">
                  {item.notice}
                </p>
              )}
              {item.state === 'interrupted' && <p className="hint">Choose the same file again to continue where the upload stopped.</p>}
              <div className="row upload-actions">
                {item.state === 'done' && link && <FinishedActions item={item} link={link} pictureOf={pictureOf} />}
                {moving && (
                  <button type="button" className="btn btn-small" onClick={() => void uploader.pause(item.id)}>
                    Pause
                  </button>
                )}
                {item.state === 'paused' && (
                  <button type="button" className="btn btn-small" onClick={() => void uploader.resume(item.id)}>
                    Resume
                  </button>
                )}
                {item.state === 'failed' && (
                  <button type="button" className="btn btn-small" onClick={() => void uploader.retry(item.id)}>
                    Retry
                  </button>
                )}
                {item.state === 'interrupted' && <ChooseAgain item={item} uploader={uploader} />}
                {item.state === 'cancelled' ? (
                  <button type="button" className="btn btn-small" onClick={() => void uploader.undoCancel(item.id)}>
                    Undo
                  </button>
                ) : (
                  item.state !== 'done' && (
                    <button type="button" className="btn btn-small" onClick={() => void uploader.cancel(item.id)}>
                      Cancel
                    </button>
                  )
                )}
              </div>
            </li>
          );
        })}
      </ul>
    </section>
  );
}
