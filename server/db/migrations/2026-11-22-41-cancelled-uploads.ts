import type { Kysely } from 'kysely';

// Design §7 `files/upload/cancel`: a cancelled upload stays cancelled. A request of that upload
// still on its way (the client aborted it, the server sees it a moment after the cancel) must
// not open the upload again and park its bytes for 24 h; this remembers the cancel until then.
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations must not depend on today's table types
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('cancelled_uploads')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .execute();
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- see up()
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('cancelled_uploads').execute();
}
