import type { Kysely } from 'kysely';

// Design §7: a chunk sent twice is harmless, and that holds after the last one too. When the
// answer to an upload's last chunk is lost (a dropped connection, a crash after the listing),
// the client asks `status` again; the upload's row was gone with the finish, so the server
// said 404, and the client sent the whole file again and had it listed twice. Each finished
// upload named by a client's uploadId is remembered here, with the file it became, for as long
// as an unfinished one would have lived.
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations must not depend on today's table types
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('finished_uploads')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('file_id', 'text', (c) => c.notNull())
    .addColumn('total_chunks', 'integer', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .execute();
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- see up()
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('finished_uploads').execute();
}
