import { sql, type Kysely } from 'kysely';

/**
 * Issue 9, a site at a million files. The background work finds the files still waiting for it
 * with `previews is null` (the start-up preview backfill, media/preview-queue.ts) and
 * `sha256 is null` (the hash backfill every 10 minutes, files/file-hashes.ts). Settled files
 * have both, so each query found nothing — after reading every row: at 1,000,000 files 340–790
 * ms on SQLite, whose driver holds the event loop meanwhile (every request of the process
 * waited, downloads included), and a 225–315 ms parallel scan on PostgreSQL, at each process
 * start and each period (2026-12-01, bench/README.md). A partial index holds only the waiting
 * rows, in the order each query reads them: the same queries now read a few entries (0.01–0.15
 * ms). Building them reads the table once (about 0.5 s per million files).
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations must not depend on today's table types
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.createIndex('files_previews_pending').on('files').column('id').where(sql.ref('previews'), 'is', null).execute();
  await db.schema.createIndex('files_sha256_pending').on('files').column('time_created').where(sql.ref('sha256'), 'is', null).execute();
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- see up()
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('files_sha256_pending').execute();
  await db.schema.dropIndex('files_previews_pending').execute();
}
