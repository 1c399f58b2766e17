import type { Kysely } from 'kysely';

// Issue 8 item 2, design §7: one writer per chunk across processes. A chunk row carries the
// lease of the request writing it (`writer`, a random id) and when that lease lapses
// (`lease_until`, milliseconds since the epoch); every state change is a compare-and-set on it.
// `uploads.finishing_until` is the same kind of lease on turning a whole upload into a listed
// file, so a finish cut short by a crash is taken up again by the next request for the upload.
// The user index serves the per-user bounds on unfinished uploads (design §6).
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations must not depend on today's table types
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('upload_chunks').addColumn('writer', 'text').execute();
  await db.schema.alterTable('upload_chunks').addColumn('lease_until', 'bigint').execute();
  await db.schema.alterTable('uploads').addColumn('finishing_until', 'bigint').execute();
  await db.schema.createIndex('uploads_user').on('uploads').column('user_id').execute();
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- see up()
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('uploads_user').execute();
  await db.schema.alterTable('uploads').dropColumn('finishing_until').execute();
  await db.schema.alterTable('upload_chunks').dropColumn('lease_until').execute();
  await db.schema.alterTable('upload_chunks').dropColumn('writer').execute();
}
