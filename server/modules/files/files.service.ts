import type { FileRecord, FileSort } from '../../../contract/files.ts';
import type { FastifyBaseLogger } from 'fastify';
import type { Deps } from '../../deps.ts';
import { notFound } from '../../http/errors.ts';
import type { Caller } from '../auth/caller.repository.ts';
import { ACTUAL_NAME_PATTERN } from './file-kind.ts';
import { reclaimDoomedBytes } from './doomed-bytes.ts';
import { filesGone } from './files-gone.ts';
import { toFileRecord } from './file-record.ts';
import { deleteFileRow, findFileByActualName, listFiles, siteTotals, userTotals } from './files.repository.ts';
import type { FileFilters } from './file-filters.ts';

/** Spec §9: file lists show 6 per page unless asked otherwise. */
export const DEFAULT_PAGE_SIZE = 6;

export interface ListInput {
  page?: number;
  pageSize?: number;
  sort?: FileSort;
}

export async function listFilePage(
  deps: Deps,
  input: ListInput,
  filters: FileFilters,
): Promise<{ success: true; files: FileRecord[]; totalImages: number }> {
  const { rows, total } = await listFiles(deps.db, {
    ...filters,
    sort: input.sort ?? 'newest',
    page: input.page ?? 1,
    pageSize: input.pageSize ?? DEFAULT_PAGE_SIZE,
  });
  return { success: true, files: rows.map((r) => toFileRecord(r, r.username, deps.config.urls.files)), totalImages: total };
}

/**
 * `filePath` may be a share URL or a bare name: only its last path segment counts, and only as
 * a lookup key for actual_name, never as a path on disk (issue 3).
 */
export function actualNameOf(filePath: string): string | null {
  const withoutQuery = filePath.split(/[?#]/)[0] ?? '';
  const last = withoutQuery.split(/[\\/]/).pop() ?? '';
  return ACTUAL_NAME_PATTERN.test(last) ? last : null;
}

/**
 * Deletes a file the caller owns, or any file when `anyOwner` (staff, design §6). Its row goes with
 * its keys listed for files/doomed-bytes.ts; a store that refuses the bytes now gets them again at
 * the next pass (jobs.ts), while the file is already gone from every list and from the files host:
 * this process's at once (files-gone.ts), the others' within TRUST_MS (files-host/file-meta-cache.ts).
 */
export async function deleteFile(deps: Deps, caller: Caller, filePath: string, anyOwner: boolean, log: FastifyBaseLogger): Promise<void> {
  const name = actualNameOf(filePath);
  const row = name ? await findFileByActualName(deps.db, name) : undefined;
  // Someone else's file answers exactly like a missing one: no hint that it exists.
  if (!row || (!anyOwner && row.user_id !== caller.id)) throw notFound('File not found.');
  if (await deleteFileRow(deps.db, row.id)) {
    filesGone(deps.db, { names: [row.actual_name] });
    // Its previews go with it (issue 11 item 9); one being made right now is dropped by its maker.
    const pass = await reclaimDoomedBytes(deps, { keys: [row.storage_key] });
    if (pass.failed > 0) log.warn({ file: row.actual_name, reason: pass.firstError }, 'the store refused to delete a deleted file; it is tried again later');
  }
}

export async function userStats(deps: Deps, caller: Caller) {
  const totals = await userTotals(deps.db, caller.id);
  return { totalFilesUploaded: totals.count, totalStorageUsed: totals.size };
}

export async function siteStats(deps: Deps) {
  const t = await siteTotals(deps.db);
  return {
    totalFilesUploaded: t.all.count,
    totalStorageUsed: t.all.size,
    totalUsers: t.users,
    photos: t.photos,
    videos: t.videos,
    others: { count: t.all.count - t.photos.count - t.videos.count, size: t.all.size - t.photos.size - t.videos.size },
  };
}
