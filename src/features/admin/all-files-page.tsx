import { useCallback, useEffect, useRef, useState } from 'react';
import { useNavigate } from 'react-router-dom';
import { ApiError, call, errorMessage } from '../../lib/api-client.ts';
import { formatDate, formatFileSize } from '../../lib/format.ts';
import { shareLink } from '../../lib/clipboard.ts';
import { useRuntimeConfig } from '../../lib/runtime-config.ts';
import { notifyError, notifySuccess } from '../../lib/notify.ts';
import { Pagination } from '../../components/pagination.tsx';
import { ResponsiveTable } from '../../components/responsive-table.tsx';
import { useConfirm } from '../../components/confirm-dialog.tsx';
import type { adminDeleteFile, adminUploaded } from '../../../contract/admin.ts';
import { FileSortSelect, type FileSortValue } from '../../components/file-sort-select.tsx';
import { FileThumb } from '../../components/file-thumb.tsx';
import { FilterFold } from '../../components/filter-fold.tsx';
import { useFocusAfterRemoval } from '../../components/use-focus-after-removal.ts';
import { ErrorBanner } from './error-banner.tsx';
import { useDebounced } from '../../lib/use-debounced.ts';
import { useLoader } from '../../lib/use-loader.ts';
import { usePageInRange } from '../../lib/use-page-in-range.ts';
import { FILES_PAGE_SIZE, type AdminFileRow } from './admin-types.ts';

/** Spec §6 / §8 and design §5: the admin file list's answer to a caller who may not see it. */
export const NOT_AUTHORIZED = 'You are not authorized to access this resource.';
const DELETE_FAILURE = 'An error occurred while deleting the file';

/** /admin/uploaded, "All files" (spec §2): mods and admins (design §6). */
export function AllFilesPage() {
  const navigate = useNavigate();
  const { filesUrl } = useRuntimeConfig();
  const confirm = useConfirm();
  const [filters, setFilters] = useState({ username: '', originalName: '', actualName: '' });
  const [page, setPage] = useState(1);
  const [sort, setSort] = useState<FileSortValue>('newest');
  const settled = useDebounced(filters);

  const load = useCallback(
    () => call<typeof adminUploaded>('/api/v1/admin/get/uploaded', { page, pageSize: FILES_PAGE_SIZE, filters: settled, sort }),
    [page, settled, sort],
  );
  const { data, error, reload } = useLoader(load);
  const heading = useRef<HTMLHeadingElement>(null);
  const focusAfterRemoval = useFocusAfterRemoval(heading, data);
  const totalPages = data ? Math.ceil(data.totalImages / FILES_PAGE_SIZE) : 0;
  const unauthorized = error instanceof ApiError && (error.message === NOT_AUTHORIZED || error.status === 403);

  // Spec §6: this answer sends the user to /, with the message shown.
  useEffect(() => {
    if (!unauthorized) return;
    notifyError(NOT_AUTHORIZED);
    navigate('/', { replace: true });
  }, [unauthorized, navigate]);

  usePageInRange(page, totalPages, setPage);

  const setFilter = (name: keyof typeof filters, value: string) => {
    setFilters((f) => ({ ...f, [name]: value }));
    setPage(1);
  };

  const remove = async (file: AdminFileRow) => {
    if (!(await confirm(`Delete ${file.original_name} (uploaded by ${file.username})? This cannot be undone.`, { confirmLabel: 'Delete', danger: true }))) return;
    try {
      await call<typeof adminDeleteFile>('/api/v1/admin/update/delete', { filePath: file.url });
      notifySuccess('File deleted.', { short: true });
      focusAfterRemoval();
    } catch (err) {
      notifyError(errorMessage(err, DELETE_FAILURE));
    }
    reload();
  };

  return (
    <section className="admin-page" aria-labelledby="admin-files-title">
      <h1 ref={heading} id="admin-files-title">All files</h1>
      <FilterFold active={Object.values(filters).filter(Boolean).length + (sort === 'newest' ? 0 : 1)} sorts>
      <form className="admin-filters" role="search" aria-label="Filter files" onSubmit={(e) => e.preventDefault()}>
        <label>
          <span>Username</span>
          <input className="input" type="search" value={filters.username} onChange={(e) => setFilter('username', e.target.value)} />
        </label>
        <label>
          <span>Original name</span>
          <input className="input" type="search" value={filters.originalName} onChange={(e) => setFilter('originalName', e.target.value)} />
        </label>
        <label>
          <span>Actual name</span>
          <input className="input" type="search" value={filters.actualName} onChange={(e) => setFilter('actualName', e.target.value)} />
        </label>
        <label>
          <span>Sort</span>
          {/* The same four sorts as the user's own list (spec §9), which admin/get/uploaded takes too. */}
          <FileSortSelect
            value={sort}
            onChange={(next) => {
              setSort(next);
              setPage(1);
            }}
          />
        </label>
      </form>
      </FilterFold>

      <ErrorBanner error={error} />

      {data && (
        <p className="admin-count" aria-live="polite">
          {data.totalImages === 1 ? '1 file' : `${data.totalImages} files`}
        </p>
      )}
      <ResponsiveTable<AdminFileRow>
        rows={data?.files ?? []}
        caption="All files"
        rowKey={(f) => f.actual_name}
        empty={data ? 'No files match these filters.' : 'Loading…'}
        columns={[
          { key: 'preview', header: 'Preview', render: (f) => <FileThumb file={f} sizes="5rem" className="admin-thumb" /> },
          {
            key: 'name',
            header: 'File',
            render: (f) => (
              // Spec §3: the share link is the files host plus the url's last segment.
              <a href={shareLink(filesUrl || new URL(f.url).origin, f.url)} target="_blank" rel="noopener noreferrer" className="admin-break tap">
                {f.original_name}
              </a>
            ),
          },
          { key: 'actual', header: 'Actual name', render: (f) => <code className="admin-break">{f.actual_name}</code> },
          // A name like "maya-k" stays whole: beside a long file name the column shrank to break it at its hyphen.
          { key: 'user', header: 'Uploader', render: (f) => f.username, nowrap: true },
          { key: 'size', header: 'Size', render: (f) => formatFileSize(f.size), nowrap: true },
          { key: 'type', header: 'Type', render: (f) => <span className="admin-break">{f.mime_type}</span> },
          { key: 'date', header: 'Uploaded', render: (f) => formatDate(f.time_created), nowrap: true },
          {
            key: 'actions',
            header: 'Actions',
            render: (f) => (
              <button type="button" className="btn btn-small btn-danger" onClick={() => void remove(f)} aria-label={`Delete ${f.original_name}`}>
                Delete
              </button>
            ),
          },
        ]}
      />
      {totalPages > 1 && <Pagination page={page} totalPages={totalPages} onPageChange={setPage} />}
    </section>
  );
}
