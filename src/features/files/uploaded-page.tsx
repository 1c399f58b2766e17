import { useCallback, useRef, useState } from 'react';
import type { FileRecord, filesDelete, filesUploaded } from '../../../contract/files.ts';
import { FileSortSelect, type FileSortValue } from '../../components/file-sort-select.tsx';
import { CopyLink } from '../../components/copy-link.tsx';
import { useConfirm } from '../../components/confirm-dialog.tsx';
import { Pagination } from '../../components/pagination.tsx';
import { call, errorMessage } from '../../lib/api-client.ts';
import { shareLink } from '../../lib/clipboard.ts';
import { PAGE_SIZE_FILES } from '../../lib/constants.ts';
import { formatDate, formatFileSize } from '../../lib/format.ts';
import { notifyError, notifySuccess } from '../../lib/notify.ts';
import { useRuntimeConfig } from '../../lib/runtime-config.ts';
import { useDebounced } from '../../lib/use-debounced.ts';
import { useLoader } from '../../lib/use-loader.ts';
import { usePageInRange } from '../../lib/use-page-in-range.ts';
import { loadFailureText } from '../../lib/use-retry-unreachable.ts';
import { Link } from 'react-router-dom';
import { FileThumb } from '../../components/file-thumb.tsx';
import { FilterFold } from '../../components/filter-fold.tsx';
import { ShareButton } from '../../components/share-button.tsx';
import { FilePreview, previewKind } from './file-preview.tsx';
import './files.css';
import { Banner } from '../../components/banner.tsx';
import { FileName } from '../../components/file-name.tsx';
import { useFocusAfterRemoval } from '../../components/use-focus-after-removal.ts';

export const MSG_DELETE_FAILED = 'An error occurred while deleting the file';

/** Spec §2 /uploaded: the user's own files, 6 per page. */
export function UploadedPage() {
  const { filesUrl } = useRuntimeConfig();
  const confirm = useConfirm();
  const [page, setPage] = useState(1);
  const [name, setName] = useState('');
  const [sort, setSort] = useState<FileSortValue>('newest');
  // The original plays only when asked for (spec §2 preview by type); the list shows small previews.
  const [playing, setPlaying] = useState<string | null>(null);
  const nameFilter = useDebounced(name);
  const heading = useRef<HTMLHeadingElement>(null);

  const load = useCallback(async () => {
    const res = await call<typeof filesUploaded>('/api/v1/files/uploaded', {
      page,
      pageSize: PAGE_SIZE_FILES,
      filters: { name: nameFilter },
      sort,
    });
    // Kept with the answer so the empty state can tell a list of its own filter from a stale one.
    return { files: res.files, total: res.totalImages, name: nameFilter };
  }, [page, nameFilter, sort]);
  const { data, error, loading, reload } = useLoader(load);
  const files = data?.files ?? [];
  // Issue 11 item 5: no answer and no saved copy of this list: say why (it loads by itself when back).
  const errorText = error === null ? '' : loadFailureText(error, 'this list');
  const focusAfterRemoval = useFocusAfterRemoval(heading, data);
  const totalPages = Math.max(1, Math.ceil((data?.total ?? 0) / PAGE_SIZE_FILES));
  usePageInRange(page, totalPages, setPage);

  // Only a settled answer for the name now in the field may say the list is empty: while the
  // filter waits out its debounce the list is the previous name's, and clearing a name that
  // matched nothing flashed "No files yet" at a user who has files.
  const settledEmpty = !loading && error === null && data !== null && data.files.length === 0 && data.name === name;

  async function remove(file: FileRecord) {
    if (!(await confirm(`Delete ${file.original_name}? This cannot be undone.`, { confirmLabel: 'Delete', danger: true }))) return;
    try {
      await call<typeof filesDelete>('/api/v1/files/delete', { filePath: file.url });
      notifySuccess('File deleted', { short: true });
      focusAfterRemoval();
      // Deleting the last file of the last page moves back one page instead of showing an empty one.
      if (files.length === 1 && page > 1) setPage(page - 1);
      else reload();
    } catch (err) {
      notifyError(errorMessage(err, MSG_DELETE_FAILED));
    }
  }

  return (
    <div className="uploaded-page">
      <h1 ref={heading} className="page-title">Uploaded Files</h1>
      <FilterFold active={(name ? 1 : 0) + (sort === 'newest' ? 0 : 1)} sorts>
      <div className="card filters">
        <div className="field">
          <label htmlFor="files-name">Filter by name</label>
          <input
            id="files-name"
            className="input"
            type="search"
            value={name}
            onChange={(e) => {
              setName(e.target.value);
              setPage(1);
            }}
          />
        </div>
        <div className="field">
          <label htmlFor="files-sort">Sort</label>
          <FileSortSelect
            id="files-sort"
            value={sort}
            onChange={(next) => {
              setSort(next);
              setPage(1);
            }}
          />
        </div>
      </div>
      </FilterFold>
      <Banner kind="error" text={errorText} />
      {settledEmpty &&
        (name ? (
          <p className="hint">No files match this name.</p>
        ) : (
          // Issue 11 item 12: an empty list says what to do next.
          <div className="card empty-state">
            <h2>No files yet</h2>
            <p className="hint">You have not uploaded any files yet. Your uploads appear here, with a link to share each one.</p>
            <Link to="/dashboard" className="btn btn-primary">
              Upload files
            </Link>
          </div>
        ))}
      <ul className="file-grid" aria-busy={loading}>
        {files.map((f) => {
          const link = shareLink(filesUrl || new URL(f.url).origin, f.url);
          return (
            <li key={f.actual_name} className="card file-card">
              {playing === f.actual_name ? (
                <div className="file-preview">
                  <FilePreview file={f} src={link} />
                </div>
              ) : (
                <FileThumb file={f} sizes="(max-width: 600px) calc(100vw - 3rem), 18rem" />
              )}
              <h2 className="file-name name-clamp" title={f.original_name}>
                <FileName name={f.original_name} />
              </h2>
              <p className="hint">
                {formatFileSize(f.size)} · {formatDate(f.time_created)}
              </p>
              <div className="row">
                <CopyLink url={link} asButton />
                <ShareButton url={link} title={f.original_name} ariaLabel={`Share ${f.original_name}`} />
                {previewKind(f.mime_type) !== 'none' && playing !== f.actual_name && (
                  <button type="button" className="btn btn-small" onClick={() => setPlaying(f.actual_name)} aria-label={`${previewKind(f.mime_type) === 'image' ? 'View' : 'Play'} ${f.original_name}`}>
                    {previewKind(f.mime_type) === 'image' ? 'View' : 'Play'}
                  </button>
                )}
                <a className="btn btn-small" href={link} target="_blank" rel="noopener noreferrer" aria-label={`Open ${f.original_name}`}>
                  Open
                </a>
                <button type="button" className="btn btn-small btn-danger" onClick={() => void remove(f)} aria-label={`Delete ${f.original_name}`}>
                  Delete
                </button>
              </div>
            </li>
          );
        })}
      </ul>
      <Pagination page={page} totalPages={totalPages} onPageChange={setPage} />
    </div>
  );
}
