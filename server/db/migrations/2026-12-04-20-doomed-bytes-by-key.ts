import { sql, type Kysely } from 'kysely';
import { isPostgres } from './2026-11-22-20-file-list-counters.ts';

/**
 * SQLite: the doomed keys' rows kept in key order (a WITHOUT ROWID table), the order the reclaim
 * reads and deletes them in (files/doomed-bytes.ts). In a rowid table they sat in the order they
 * were doomed, beside an index by key: each batch of 200 keys read in key order deleted rows
 * from pages all over the table, so reclaiming 90,000 keys wrote 503 MiB for a table of 8.5 MiB.
 * In key order a batch's rows share a few pages: 20 MiB, in a table of half the size
 * (2026-12-04, probe; bench/README.md, "Removing a large account on SQLite"). PostgreSQL keeps a
 * heap beside its index whatever the table says; its writes are its own process's to pace.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations must not depend on today's table types
export async function up(db: Kysely<any>): Promise<void> {
  if (isPostgres(db)) return;
  await rebuild(db, sql`without rowid`);
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- see up()
export async function down(db: Kysely<any>): Promise<void> {
  if (isPostgres(db)) return;
  await rebuild(db, sql``);
}

/** The same table and rows, stored the way `storedAs` says (SQLite cannot alter that in place). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- see up()
async function rebuild(db: Kysely<any>, storedAs: ReturnType<typeof sql>): Promise<void> {
  await sql`create table doomed_bytes_rebuilt (
    storage_key text primary key not null, previews text, kind text not null, doomed_at bigint not null
  ) ${storedAs}`.execute(db);
  await sql`insert into doomed_bytes_rebuilt (storage_key, previews, kind, doomed_at)
    select storage_key, previews, kind, doomed_at from doomed_bytes order by storage_key`.execute(db);
  await sql`drop table doomed_bytes`.execute(db);
  await sql`alter table doomed_bytes_rebuilt rename to doomed_bytes`.execute(db);
}
