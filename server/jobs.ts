import type { Deps } from './deps.ts';
import { PROCESS_HOLDER as HOLDER, releaseLease, renewLease, takeLease } from './job-lease.ts';
import { nowSeconds } from './lib/ids.ts';
import { discardUploadBytes } from './modules/files/upload.service.ts';
import { backfillFileHashes } from './modules/files/file-hashes.ts';
import { reclaimDoomedBytes, type ReclaimPass } from './modules/files/doomed-bytes.ts';
import { claimUpload, forgetOldCancels, listExpiredUploads } from './modules/files/uploads.repository.ts';

const SWEEP_EVERY_MS = 10 * 60 * 1000;
/** A periodic job's lease: over before the next period's tick, so a stopped holder blocks one period at most. */
const LEASE_SECONDS = SWEEP_EVERY_MS / 1000 - 30;
const SWEEP_BATCH = 200;

/**
 * Design §7: unfinished uploads expire 24 h after their last activity; this drops them and
 * reclaims their bytes. Each row is claimed before its bytes go, so two api processes sweeping
 * at once never race, and an upload touched since it was listed is left alone.
 * `now` is in seconds and can be set by tests.
 */
export async function sweepExpiredUploads(deps: Deps, now: number = nowSeconds()): Promise<number> {
  let removed = 0;
  for (;;) {
    const batch = await listExpiredUploads(deps.db, now, SWEEP_BATCH);
    for (const upload of batch) {
      if (await claimUpload(deps.db, upload.id, now)) {
        await discardUploadBytes(deps, upload);
        removed += 1;
      }
    }
    if (batch.length < SWEEP_BATCH) {
      await forgetOldCancels(deps.db, now);
      return removed;
    }
  }
}

/**
 * The sweep, run by whichever api process takes the period's lease first (issue 10: once across
 * the deployment, not once per process). Null when another process holds the lease.
 */
export async function leasedSweep(deps: Deps, now: number = nowSeconds(), holder: string = HOLDER): Promise<number | null> {
  // A little shorter than the period, so the next tick of whoever swept can take it again.
  if (!(await takeLease(deps.db, 'sweep-expired-uploads', holder, now, LEASE_SECONDS))) return null;
  return sweepExpiredUploads(deps, now);
}

/**
 * Bytes of deleted rows that a store refused when they were deleted, or that a crash left
 * (files/doomed-bytes.ts), by whichever api process takes the period's lease; at every start too.
 */
export async function leasedReclaim(deps: Deps, stopped: () => boolean = () => false, now: number = nowSeconds(), holder: string = HOLDER): Promise<ReclaimPass | null> {
  if (!(await takeLease(deps.db, 'reclaim-doomed-bytes', holder, now, LEASE_SECONDS))) return null;
  const pass = await reclaimDoomedBytes(deps, { stopped, now });
  if (pass.failed > 0) console.error(`the store refused to delete ${pass.failed} doomed objects; they are tried again next period`, pass.firstError);
  return pass;
}

/** files.sha256 for new files, by whichever api process takes the period's lease (issue 10). */
export async function leasedHashBackfill(deps: Deps, stopped: () => boolean = () => false, now: number = nowSeconds(), holder: string = HOLDER): Promise<number | null> {
  if (!(await takeLease(deps.db, 'backfill-file-hashes', holder, now, LEASE_SECONDS))) return null;
  return backfillFileHashes(deps, { stopped });
}

const PREVIEW_LEASE = 'backfill-previews';
/** How often a pass still rendering extends its lease. */
const PREVIEW_RENEW_MS = 60_000;

/**
 * Previews of images listed without a record (issue 11 item 9): files from before previews
 * existed, queued by a process that stopped, or whose making met a store or database that failed
 * (media/preview-queue.ts leaves those for a later pass). By whichever api process takes the
 * period's lease, so several processes starting at once do not each render every such image;
 * at every start too. False when another process holds the lease; `deps.previews.backfill()`
 * joins the pass it started.
 */
export async function leasedPreviewBackfill(deps: Deps, now: number = nowSeconds(), holder: string = HOLDER, renewEveryMs = PREVIEW_RENEW_MS): Promise<boolean> {
  // This process's own next tick while its renewals hold the lease takes it again: its queue may
  // just be busy with new uploads, and files a failed read left since still want a pass.
  const held =
    (await takeLease(deps.db, PREVIEW_LEASE, holder, now, LEASE_SECONDS)) ||
    (await renewLease(deps.db, PREVIEW_LEASE, holder, now, LEASE_SECONDS, { unexpired: true }));
  if (!held) return false;
  // Held while the pass's images are still being rendered: a backlog can outlast the period, and
  // another process's next tick would start a second pass rendering the same images.
  const renew = setInterval(() => {
    renewLease(deps.db, PREVIEW_LEASE, holder, nowSeconds(), LEASE_SECONDS, { unexpired: true }).catch(() => {});
  }, renewEveryMs);
  renew.unref();
  // Not awaited: a pass waits for the images it queued, and a stop must not (the queue's close ends them).
  void deps.previews
    .backfill()
    .then(() => deps.previews.idle())
    .catch((err: unknown) => console.error('preview backfill failed', err))
    .finally(() => clearInterval(renew));
  return true;
}

/** Periodic work of the api role; returns a function that stops it. */
export function startBackgroundJobs(deps: Deps): () => Promise<void> {
  let running: Promise<unknown> = Promise.resolve();
  let previewLease: Promise<unknown> = Promise.resolve();
  let stopped = false;
  const tick = () => {
    // Accounts whose removal a stopped or crashed process left midway (users/account-removals.ts).
    running = deps.accountRemovals
      .drain()
      .then(() => leasedSweep(deps))
      .catch((err: unknown) => console.error('upload sweep failed', err))
      .then(() => leasedReclaim(deps, () => stopped))
      .catch((err: unknown) => console.error('reclaiming doomed bytes failed', err))
      .then(() => leasedHashBackfill(deps, () => stopped))
      .catch((err: unknown) => console.error('file hash backfill failed', err));
    previewLease = leasedPreviewBackfill(deps).catch((err: unknown) => console.error('preview backfill failed', err));
  };
  const timer = setInterval(tick, SWEEP_EVERY_MS);
  timer.unref();
  tick();
  return async () => {
    clearInterval(timer);
    stopped = true;
    await deps.accountRemovals.stop();
    await running;
    await previewLease;
    // What this process's queue leaves unmade is found at once by the next start, as before the
    // lease, not a period later.
    await releaseLease(deps.db, PREVIEW_LEASE, HOLDER).catch(() => {});
  };
}
