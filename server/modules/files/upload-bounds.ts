import type { Deps } from '../../deps.ts';
import { HttpError, tooLarge } from '../../http/errors.ts';
import type { Caller } from '../auth/caller.repository.ts';
import { countUnfinishedUploads, storedFileBytes, unfinishedBytes } from './uploads.repository.ts';

const MB = 1_048_576;

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
