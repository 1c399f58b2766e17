import type { Database } from './db/index.ts';

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
