import type { Kysely } from 'kysely';

// Sorting one user's files by size (spec §9: largest, smallest) walked the global size index
// and filtered by owner; this index serves the owner's pages directly (bench/list-latency.ts).
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations must not depend on today's table types
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.createIndex('files_user_size').on('files').columns(['user_id', 'size']).execute();
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- see up()
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('files_user_size').execute();
}
