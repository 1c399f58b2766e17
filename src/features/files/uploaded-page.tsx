import { useCallback, useEffect, useRef, useState } from 'react';
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
import { loadFailureText, useRetryUnreachable } from '../../lib/use-retry-unreachable.ts';
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
  const [files, setFiles] = useState<FileRecord[]>([]);
  const [total, setTotal] = useState(0);
  const [page, setPage] = useState(1);
  const [name, setName] = useState('');
  const [sort, setSort] = useState<FileSortValue>('newest');
  const [loading, setLoading] = useState(true);
  const [error, setError] = useState('');
  // The original plays only when asked for (spec §2 preview by type); the list shows small previews.
  const [playing, setPlaying] = useState<string | null>(null);
  const nameFilter = useDebounced(name);
  const heading = useRef<HTMLHeadingElement>(null);
  const focusAfterRemoval = useFocusAfterRemoval(heading, files);

  // The list tries again by itself after a failure that never reached the server.
  const retry = useRetryUnreachable(() => void load());
  // Only the newest request may fill the list: typing "c", pausing, then "at" sends two queries,
  // and the one for "c" can answer last (useLoader does the same for the admin lists).
  const latest = useRef(0);
  const load = useCallback(async () => {
    const mine = ++latest.current;
    setLoading(true);
    try {
      const res = await call<typeof filesUploaded>('/api/v1/files/uploaded', {
        page,
        pageSize: PAGE_SIZE_FILES,
        filters: { name: nameFilter },
        sort,
      });
      if (mine !== latest.current) return;
      setFiles(res.files);
      setTotal(res.totalImages);
      setError('');
      retry.settled();
    } catch (err) {
      if (mine !== latest.current) return;
      // Issue 11 item 5: no answer and no saved copy of this list: say why, and load it when back.
      setError(loadFailureText(err, 'this list'));
      retry.after(err);
    } finally {
      if (mine === latest.current) setLoading(false);
    }
  }, [page, nameFilter, sort, retry]);

  useEffect(() => {
    void load();
  }, [load]);

  const totalPages = Math.max(1, Math.ceil(total / PAGE_SIZE_FILES));

  // A page past the end (files deleted on another device too, or two deletes at once) showed
  // 'No files yet' with no pagination to go back by: go to the last page that has files.
  useEffect(() => {
    if (page > totalPages) setPage(totalPages);
  }, [page, totalPages]);

  async function remove(file: FileRecord) {
    if (!(await confirm(`Delete ${file.original_name}? This cannot be undone.`, { confirmLabel: 'Delete', danger: true }))) return;
    try {
      await call<typeof filesDelete>('/api/v1/files/delete', { filePath: file.url });
      notifySuccess('File deleted', { short: true });
      focusAfterRemoval();
      // Deleting the last file of the last page moves back one page instead of showing an empty one.
      if (files.length === 1 && page > 1) setPage(page - 1);
      else void load();
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
      <Banner kind="error" text={error} />
      {!loading && !error && files.length === 0 &&
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
