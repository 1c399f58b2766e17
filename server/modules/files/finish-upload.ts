import { buffer } from 'node:stream/consumers';
import type { Readable } from 'node:stream';
import type { UploadDoneResponse } from '../../../contract/files.ts';
import type { Deps } from '../../deps.ts';
import { HttpError, tooLarge, unsupportedType } from '../../http/errors.ts';
import { newId, nowSeconds } from '../../lib/ids.ts';
import type { Caller } from '../auth/caller.repository.ts';
import { HEAD_BYTES, isAllowed, newActualName, storableSize, unknownKind } from './file-kind.ts';
import { toFileRecord } from './file-record.ts';
import { isPreviewable } from '../media/previews.ts';
import type { Database } from '../../db/index.ts';
import { stillStored } from '../../storage/storage.ts';
import { lockUser } from '../users/users.repository.ts';
import { quotaExceeded } from './upload-bounds.ts';
import { claimFinish, completeFinish, dropUpload, releaseFinish, renewFinish, storedFileBytes, type UploadRow } from './uploads.repository.ts';

/**
 * Turns an upload whose bytes are all stored into a listed file (design §7): type from the
 * bytes' head, the allowed list, finalize in place, then the row. Only the request holding the
 * upload's finish claim runs this (see finishClaimed). It can be run again after a crash at any
 * point: an object already finalized is read where it is, and the file row and the end of the
 * upload are written in one transaction.
 */
export async function finishUpload(deps: Deps, caller: Caller, upload: UploadRow, size: number, rememberUntil?: number): Promise<UploadDoneResponse> {
  const key = upload.storage_key;
  let finalized = await stillStored(deps.storage, key);
  const read = (start: number, end: number) =>
    finalized ? deps.storage.read(key, { start, end: end - 1 }) : deps.storage.readUnfinished(key, start, end);
  try {
    if (size > (await deps.settings.maxFileSizeBytes())) throw tooLarge(await tooLargeMessage(deps));
    const head = await buffer(read(0, Math.min(size, HEAD_BYTES)));
    // Parsed in a reader process with limits (issue 8 item 1); its failure leaves the bytes-only rule.
    const kind = (await deps.metadata.kind(head, size)) ?? unknownKind(head, size);
    if (!isAllowed(kind.mime, await deps.settings.mimeTypes())) {
      throw unsupportedType(`Files of type ${kind.mime} are not allowed on this site.`);
    }
    const dims = storableSize(kind.mime.startsWith('video/') ? await videoDimensions(deps, read, kind.mime, head, size) : kind);
    if (!finalized) await deps.storage.finalize(key, size);
    finalized = true;
    const row = {
      id: newId(),
      actual_name: newActualName(kind.ext),
      original_name: upload.original_name,
      user_id: caller.id,
      size,
      mime_type: kind.mime,
      width: dims.width,
      height: dims.height,
      time_created: nowSeconds(),
      storage_key: key,
      sha256: null,
      // A type that never has previews is recorded as having none with its row; only a
      // previewable one waits (NULL) for the preview queue, which would otherwise read the row
      // back and write that same empty list a moment later.
      previews: isPreviewable(kind.mime, size) ? null : '[]',
    };
    await completeFinish(deps.db, upload, row, { beforeListing: await quotaAtListing(deps, caller, size), rememberUntil });
    // Previews are made in the background; the answer lists none yet (issue 11 item 9).
    if (row.previews === null) deps.previews.enqueue(row.id);
    const file = toFileRecord(row, caller.username, deps.config.urls.files);
    return { success: true, url: file.url, file };
  } catch (err) {
    if (!(err instanceof HttpError) || err.statusCode >= 500) {
      // A store or database that failed for a moment (S3 503 SlowDown, a dropped connection)
      // refuses nothing: every byte stays, and the client's retry finishes the upload (issue 10).
      await releaseFinish(deps.db, upload.id).catch(() => {});
      throw err;
    }
    // Refused (413, 415): the upload and its bytes go too (issue 3: 415 discards them).
    await dropUpload(deps.db, upload.id).catch(() => {});
    await (finalized ? deps.storage.delete(key) : deps.storage.discard(key)).catch(() => {});
    throw err;
  }
}

/**
 * Finishes the upload if this request wins its finish claim (design §7: of two requests
 * completing an upload at once exactly one lists it; a finish cut short by a crash is taken up
 * by the next request once its claim lapses). Null when another request is finishing it.
 */
/** `rememberUntil`: the upload was named by the client's uploadId (completeFinish). */
export async function finishClaimed(deps: Deps, caller: Caller, upload: UploadRow, size: number, rememberUntil?: number): Promise<UploadDoneResponse | null> {
  const leaseMs = deps.uploadLeaseMs;
  if (!(await claimFinish(deps.db, upload.id, Date.now(), Date.now() + leaseMs))) return null;
  const timer = setInterval(() => void renewFinish(deps.db, upload.id, Date.now() + leaseMs).catch(() => {}), Math.max(50, leaseMs / 5));
  timer.unref();
  try {
    return await finishUpload(deps, caller, upload, size, rememberUntil);
  } finally {
    clearInterval(timer);
  }
}

/**
 * Design §6, the storage quota, where uploads meet: each body is checked against the files
 * listed when it started, so several whole files streamed at once each saw room for itself
 * alone and together went past the quota (N requests stored N × the quota). The listing is
 * checked again in the transaction that lists the file, under the owner's row lock on
 * PostgreSQL (SQLite runs one transaction at a time): of uploads racing for the last room, the
 * first listed wins and the rest are refused (413) with their bytes dropped.
 */
async function quotaAtListing(deps: Deps, caller: Caller, size: number): Promise<((trx: Database) => Promise<void>) | undefined> {
  const quota = await deps.settings.storageQuotaBytes(caller.role);
  if (quota === null) return undefined;
  return async (trx) => {
    await lockUser(trx, deps.dialect, caller.id);
    if ((await storedFileBytes(trx, caller.id)) + size > quota) throw quotaExceeded(quota, caller);
  };
}

export async function tooLargeMessage(deps: Deps): Promise<string> {
  const mb = (await deps.settings.get()).max_file_size;
  return `The file is larger than the maximum of ${mb} MB.`;
}

/**
 * A video's size may sit past the head (an MP4's moov after mdat), so it is measured apart from
 * the type, which needs only the head. Bounded reads, in a reader process; null on any failure (spec §3).
 */
async function videoDimensions(
  deps: Deps,
  readRange: (start: number, end: number) => Readable,
  mime: string,
  head: Buffer,
  size: number,
): Promise<{ width: number | null; height: number | null }> {
  const read = (start: number, end: number) => buffer(readRange(start, end));
  return (await deps.metadata.videoSize(mime, head, size, read)) ?? { width: null, height: null };
}
