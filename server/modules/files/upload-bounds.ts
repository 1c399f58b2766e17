import type { Deps } from '../../deps.ts';
import { HttpError, tooLarge } from '../../http/errors.ts';
import type { Caller } from '../auth/caller.repository.ts';
import { MB } from '../settings/settings.service.ts';
import { createUploadWithin, openWholeWithin, reserveWholeFile, storedFileBytes, unfinishedBytes, type UploadRow } from './uploads.repository.ts';

/**
 * Design §6, issue 8 item 4: what one account may hold open, checked before any byte is
 * written, in the transaction that opens the upload. Each refusal names the bound (the Site
 * Settings entry) so the user and the operator know which one to look at.
 */
export async function openBoundedUpload(deps: Deps, caller: Caller, row: UploadRow): Promise<UploadRow> {
  const { max_unfinished_uploads: max } = await deps.settings.limits();
  const opened = await createUploadWithin(deps.db, deps.dialect, row, max);
  if (!opened) throw tooManyUnfinished(max);
  return opened;
}

/**
 * openBoundedUpload for a whole file in one request, whose upload id the request made up: opened
 * with the first reservation of its body's room (reserveAhead(0)), which a file of up to 256 KiB
 * never outgrows, so a screenshot's upload asks the database once before it is listed (issue 9).
 */
export async function openWholeUpload(deps: Deps, caller: Caller, row: UploadRow): Promise<{ upload: UploadRow; reserved: number }> {
  const { max_unfinished_uploads: max, max_unfinished_size: maxMb } = await deps.settings.limits();
  const bound = { maxUnfinished: maxMb * MB, nowMs: Date.now(), chunkSize: deps.uploadChunkSize };
  const opened = await openWholeWithin(deps.db, deps.dialect, row, max, reserveAhead(0), bound);
  if (!opened) throw tooManyUnfinished(max);
  return opened;
}

function tooManyUnfinished(max: number): HttpError {
  return new HttpError(429, `You have ${max} unfinished uploads, the most this site allows (max unfinished uploads); finish or cancel one before starting another.`);
}

/**
 * The caller holds the lease on a chunk that will hold `chunkBytes` once whole. Counted with
 * what their unfinished uploads already hold (a chunk being received by another request counts
 * whole) and, for the storage quota, with their listed files. Their own counts as what it will
 * hold, a file's last chunk as the rest of the file: counted whole, a lone file as large as max
 * unfinished upload size was refused at its last chunk (settings/upload-sizes.ts relies on it).
 */
export async function assertRoomFor(deps: Deps, caller: Caller, chunkBytes: number): Promise<void> {
  const limits = await deps.settings.limits();
  const held = await unfinishedBytes(deps.db, caller.id, Date.now(), deps.uploadChunkSize);
  const pending = held - deps.uploadChunkSize + chunkBytes;
  if (pending > limits.max_unfinished_size * MB) throw unfinishedTooLarge(limits.max_unfinished_size);
  await assertQuota(deps, caller, pending);
}

/**
 * How far past its bytes a whole file reserves (reserveWholeFile): a quarter of what it has,
 * 256 KiB (one parser piece) to 32 MiB. Room reserved and not yet filled refuses another body
 * that would fit, so it is kept small; a GiB costs some 60 reservations.
 */
export function reserveAhead(seen: number): number {
  return seen + Math.min(32 * MB, Math.max(256 * 1024, Math.floor(seen / 4)));
}

/**
 * A whole file's bounds while its body streams, its size unknown until the end. A whole file
 * counts as an unfinished upload, as a chunked one does: left out, one account could hold any
 * number of 1 GB bodies open at once. Its room under max unfinished upload size is reserved
 * ahead of its bytes (reserveAhead), so a body asks the database a few dozen times per GiB,
 * the first time before its first byte is written; bodies streaming at once, on any process,
 * share the bound instead of each seeing the room the others are filling. The storage quota
 * refuses early only a file that alone would not fit: several that each fit meet where they
 * are listed, which admits exactly as many as fit (quotaAtListing).
 */
export function wholeFileBounds(deps: Deps, caller: Caller, upload: UploadRow, openedWith = 0): (seen: number) => HttpError | null | Promise<HttpError | null> {
  let reserved = openedWith;
  let quota: { bytes: number; room: number } | null = null;
  /** Whether the quota has been looked at: before the first byte, as before the open reserved room (openWholeUpload). */
  let quotaRead = false;
  const checkQuota = async (seen: number): Promise<HttpError | null> => {
    const bytes = await deps.settings.storageQuotaBytes(caller.role);
    quotaRead = true;
    if (bytes === null) return null;
    quota ??= { bytes, room: bytes - (await storedFileBytes(deps.db, caller.id)) };
    return seen > quota.room ? quotaExceeded(quota.bytes, caller) : null;
  };
  const reserve = async (seen: number): Promise<HttpError | null> => {
    const overQuota = await checkQuota(seen);
    if (overQuota) return overQuota;
    const { max_unfinished_size: maxMb } = await deps.settings.limits();
    const granted = await reserveWholeFile(deps.db, deps.dialect, upload, { need: seen, want: reserveAhead(seen) }, { maxUnfinished: maxMb * MB, nowMs: Date.now(), chunkSize: deps.uploadChunkSize });
    if (granted === false) return unfinishedTooLarge(maxMb);
    reserved = granted;
    return null;
  };
  return (seen) => {
    if (quota !== null && seen > quota.room) return quotaExceeded(quota.bytes, caller);
    if (seen > reserved) return reserve(seen);
    return quotaRead ? null : checkQuota(seen);
  };
}

export function unfinishedTooLarge(maxMb: number): HttpError {
  return tooLarge(
    `Your unfinished uploads would hold more than ${maxMb} MB, the most this site allows (max unfinished upload size); finish or cancel an upload first.`,
  );
}

/** The role's storage quota against listed files plus `more` bytes. */
export async function assertQuota(deps: Deps, caller: Caller, more: number): Promise<void> {
  const quota = await deps.settings.storageQuotaBytes(caller.role);
  if (quota === null) return;
  if ((await storedFileBytes(deps.db, caller.id)) + more > quota) throw quotaExceeded(quota, caller);
}

export function quotaExceeded(quota: number, caller: Caller): HttpError {
  return tooLarge(`This upload would exceed your storage quota of ${quota / MB} MB (role '${caller.role}'); delete some files to make room.`);
}
