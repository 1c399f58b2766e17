import type { Kysely } from 'kysely';

/**
 * Issue 9, a wide name filter on one more process. A name filter's total is kept per process
 * (files/name-counts.ts); behind a load balancer the next page of a filter often lands on a
 * process that never counted it, and counted every match again (0.4–0.8 s for "png" in 40 % of
 * a million names). A count of a large list is now also kept here, under the list's counter it
 * was read with, so any process carries it forward through the list's log instead. `kept_at` orders
 * the rows for pruning (files/name-counts-store.ts keeps the most recent SHARED_COUNTS).
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations must not depend on today's table types
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('file_name_counts')
    .addColumn('key', 'text', (c) => c.primaryKey())
    .addColumn('user_id', 'text', (c) => c.references('users.id').onDelete('cascade'))
    .addColumn('changes', 'bigint', (c) => c.notNull())
    .addColumn('total', 'bigint', (c) => c.notNull())
    .addColumn('via_trigrams', 'integer', (c) => c.notNull())
    .addColumn('kept_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('file_name_counts_kept_at').on('file_name_counts').column('kept_at').execute();
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- see up()
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('file_name_counts').execute();
}
