import crypto from 'node:crypto';
import type { Database } from './db/index.ts';

/** This process, as a lease holder. */
export const PROCESS_HOLDER = crypto.randomUUID();

/**
 * Takes the lease of job `name` for `seconds` when nobody holds it (or the holder's lease ran
 * out): one atomic upsert, so of many processes asking at once exactly one gets it (issue 10:
 * background sweeps run once across the deployment). Works alike on SQLite and PostgreSQL.
 */
export async function takeLease(db: Database, name: string, holder: string, now: number, seconds: number): Promise<boolean> {
  const taken = await db
    .insertInto('job_leases')
    .values({ name, holder, expires_at: now + seconds })
    .onConflict((oc) =>
      oc
        .column('name')
        .doUpdateSet({ holder, expires_at: now + seconds })
        .where('job_leases.expires_at', '<=', now),
    )
    .returning('holder')
    .executeTakeFirst();
  return taken?.holder === holder;
}

/**
 * Extends a lease its holder still has; false when it ran out and another process took it.
 * `unexpired`: not one that ran out or was released either (releaseLease), so a renewal landing
 * after the holder let go does not take the lease back.
 */
export async function renewLease(db: Database, name: string, holder: string, now: number, seconds: number, options: { unexpired?: boolean } = {}): Promise<boolean> {
  let renew = db.updateTable('job_leases').set({ expires_at: now + seconds }).where('name', '=', name).where('holder', '=', holder);
  if (options.unexpired) renew = renew.where('expires_at', '>', now);
  const renewed = await renew.executeTakeFirst();
  return Number(renewed.numUpdatedRows) > 0;
}

/** Ends a lease early, so work left by a process that stops is taken up at once by the next. */
export async function releaseLease(db: Database, name: string, holder: string): Promise<void> {
  await db.updateTable('job_leases').set({ expires_at: 0 }).where('name', '=', name).where('holder', '=', holder).execute();
}
