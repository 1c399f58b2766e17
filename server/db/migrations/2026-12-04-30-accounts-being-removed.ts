import type { Kysely } from 'kysely';

/**
 * An account being removed (users/account-removals.ts): marked in the request that asks for it,
 * its files then deleted a batch at a time, by whichever api process holds the removals' lease —
 * after the answer when there are many, and after a restart when a process died midway. Until
 * its row goes the account is hidden: nobody signs in to it, lists it or acts on it.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations must not depend on today's table types
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('users').addColumn('removing_since', 'bigint').execute();
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- see up()
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('users').dropColumn('removing_since').execute();
}
