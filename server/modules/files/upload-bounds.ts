import type { Deps } from '../../deps.ts';
import { HttpError, tooLarge } from '../../http/errors.ts';
import type { Caller } from '../auth/caller.repository.ts';
import { MB } from '../settings/settings.service.ts';
import { countUnfinishedUploads, storedFileBytes, unfinishedBytes } from './uploads.repository.ts';

/**
 * Design §6, issue 8 item 4: what one account may hold open, checked before any byte is
 * written. Each refusal names the bound (the Site Settings entry) so the user and the operator
 * know which one to look at.
 */
export async function assertMayOpenUpload(deps: Deps, caller: Caller, now: number): Promise<void> {
  const { max_unfinished_uploads: max } = await deps.settings.limits();
  if ((await countUnfinishedUploads(deps.db, caller.id, now)) >= max) {
    throw new HttpError(
      429,
      `You have ${max} unfinished uploads, the most this site allows (max unfinished uploads); finish or cancel one before starting another.`,
    );
  }
}

/**
 * `incoming` bytes are about to be written for the caller. Counted with what their unfinished
 * uploads already hold (a chunk being received counts whole, the caller's own included) and,
 * for the storage quota, with their listed files.
 */
export async function assertRoomFor(deps: Deps, caller: Caller, incoming: number, options: { ownLeaseCounted: boolean }): Promise<void> {
  const limits = await deps.settings.limits();
  const held = await unfinishedBytes(deps.db, caller.id, Date.now(), deps.uploadChunkSize);
  const pending = options.ownLeaseCounted ? held : held + incoming;
  if (pending > limits.max_unfinished_size * MB) throw unfinishedTooLarge(limits.max_unfinished_size);
  await assertQuota(deps, caller, pending);
}

/**
 * A whole file's bounds while its body streams, its size unknown until the end. A whole file
 * counts as an unfinished upload, as a chunked one does: left out, one account could hold any
 * number of 1 GB bodies open at once. Each bound is read once, here; a quota already used up
 * refuses before any byte is written.
 */
export async function wholeFileBounds(deps: Deps, caller: Caller): Promise<(seen: number) => HttpError | null> {
  const { max_unfinished_size: maxUnfinished } = await deps.settings.limits();
  const quota = await deps.settings.storageQuotaBytes(caller.role);
  const held = await unfinishedBytes(deps.db, caller.id, Date.now(), deps.uploadChunkSize);
  const stored = quota === null ? 0 : await storedFileBytes(deps.db, caller.id);
  if (quota !== null && stored > quota) throw quotaExceeded(quota, caller);
  return (seen) => {
    if (held + seen > maxUnfinished * MB) return unfinishedTooLarge(maxUnfinished);
    return quota !== null && stored + held + seen > quota ? quotaExceeded(quota, caller) : null;
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
