import { useEffect, useState } from 'react';
import { Link } from 'react-router-dom';
import type { FileRecord, filesUploaded } from '../../../contract/files.ts';
import { CopyLink } from '../../components/copy-link.tsx';
import { FileThumb } from '../../components/file-thumb.tsx';
import { ShareButton } from '../../components/share-button.tsx';
import { call } from '../../lib/api-client.ts';
import { shareLink } from '../../lib/clipboard.ts';
import { formatFileSize } from '../../lib/format.ts';
import { useRuntimeConfig } from '../../lib/runtime-config.ts';
import { FileName } from '../../components/file-name.tsx';

/** A recent upload's card is half a phone wide: a long name gives way sooner than in a full-width list. */
const RECENT_NAME_SHOWN = 48;

/** How many of the newest files the dashboard shows (one row of four on a desktop, two by two on a phone). */
export const RECENT_COUNT = 4;

interface Props {
  /** Changes whenever an upload finishes, so the list asks the server again. */
  refreshKey: number;
  /** A picture of a file picked on this device, by `localKey`, for uploads the server has no previews of yet. */
  localPicture: (name: string, size: number) => string | null;
}

/** Issue 11 item 8: the last few files, with a thumbnail, Copy link and Share, one tap from the uploader. */
export function RecentUploads({ refreshKey, localPicture }: Props) {
  const { filesUrl } = useRuntimeConfig();
  const [files, setFiles] = useState<FileRecord[] | null>(null);

  useEffect(() => {
    let live = true;
    call<typeof filesUploaded>('/api/v1/files/uploaded', { page: 1, pageSize: RECENT_COUNT, filters: { name: '' }, sort: 'newest' })
      .then((r) => live && setFiles(r.files))
      // The uploader works without this list; offline it simply stays as it was.
      .catch((err: unknown) => console.warn('Could not load recent uploads', err));
    return () => {
      live = false;
    };
  }, [refreshKey]);

  if (!files || files.length === 0) return null;
  return (
    <section className="card" aria-labelledby="recent-title">
      <div className="row recent-head">
        <h2 id="recent-title">Recent uploads</h2>
        <Link to="/uploaded" className="btn btn-small">
          All files
        </Link>
      </div>
      <ul className="recent-list">
        {files.map((f) => {
          const link = shareLink(filesUrl || new URL(f.url).origin, f.url);
          return (
            <li key={f.actual_name} className="recent-item">
              <FileThumb file={f} sizes="(max-width: 760px) 45vw, 12rem" localSrc={localPicture(f.original_name, f.size)} />
              <p className="recent-name name-clamp" title={f.original_name}>
                <FileName name={f.original_name} shown={RECENT_NAME_SHOWN} />
              </p>
              <p className="hint">{formatFileSize(f.size)}</p>
              <div className="row recent-actions">
                <CopyLink url={link} asButton>
                  Copy link
                </CopyLink>
                <ShareButton url={link} title={f.original_name} ariaLabel={`Share ${f.original_name}`} />
              </div>
            </li>
          );
        })}
      </ul>
    </section>
  );
}
