import type { Kysely } from 'kysely';

// Issue 11 item 9: which WebP previews a file has (server/modules/media/previews.ts). NULL
// means not made yet, so files listed before this migration are picked up by the backfill.
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations must not depend on today's table types
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('files').addColumn('previews', 'text').execute();
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- see up()
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('files').dropColumn('previews').execute();
}
