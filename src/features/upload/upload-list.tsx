import { shareLink } from '../../lib/clipboard.ts';
import { formatFileSize } from '../../lib/format.ts';
import { useRuntimeConfig } from '../../lib/runtime-config.ts';
import type { UploadItem, UploadState, Uploader } from '../../lib/uploader.ts';
import { FinishedActions } from './finished-actions.tsx';
import { percentOf } from './use-uploads.ts';

const STATE_TEXT: Record<UploadState, string> = {
  waiting: 'Waiting',
  uploading: 'Uploading',
  paused: 'Paused',
  offline: 'Waiting for the connection',
  failed: 'Failed',
  done: 'Done',
};

interface Props {
  items: UploadItem[];
  uploader: Uploader;
  /** A local picture of a file picked on this device, shown beside a finished upload (issue 11 item 8). */
  pictureOf?: (name: string, size: number) => string | null;
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
      <ul className="upload-list">
        {items.map((item) => {
          const pct = percentOf(item);
          const link = item.url ? shareLink(filesUrl || new URL(item.url).origin, item.url) : '';
          return (
            <li key={item.id} className="upload-item">
              <div className="upload-item-head">
                <span className="upload-name">{item.name}</span>
                <span className="hint">
                  {formatFileSize(item.size)} · {STATE_TEXT[item.state]} · {pct}%
                  {!item.persistent && item.state !== 'done' ? ' · lost if you leave this page' : ''}
                </span>
              </div>
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
              {item.state === 'failed' && (
                <p className="field-error" role="alert">
                  {item.error ?? 'Error uploading file'}
                </p>
              )}
              <div className="row upload-actions">
                {item.state === 'done' && link && <FinishedActions item={item} link={link} pictureOf={pictureOf} />}
                {(item.state === 'uploading' || item.state === 'waiting') && (
                  <button type="button" className="btn btn-small" onClick={() => void uploader.pause(item.id)}>
                    Pause
                  </button>
                )}
                {(item.state === 'paused' || item.state === 'offline') && (
                  <button type="button" className="btn btn-small" onClick={() => void uploader.resume(item.id)}>
                    Resume
                  </button>
                )}
                {item.state === 'failed' && (
                  <button type="button" className="btn btn-small" onClick={() => void uploader.retry(item.id)}>
                    Retry
                  </button>
                )}
                {item.state !== 'done' && (
                  <button type="button" className="btn btn-small" onClick={() => void uploader.cancel(item.id)}>
                    Cancel
                  </button>
                )}
              </div>
            </li>
          );
        })}
      </ul>
    </section>
  );
}
