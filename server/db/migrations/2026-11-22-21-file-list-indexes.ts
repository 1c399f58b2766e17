import { sql, type Kysely } from 'kysely';
import { isPostgres } from './2026-11-22-20-file-list-counters.ts';

/**
 * Issue 9, lists at a million files. Every sort of both lists (design §9: newest, oldest,
 * largest, smallest, ties broken by id) gets an index whose order is exactly the list's order
 * and which holds the id, so a page — even page 83,333 — is read from the index alone and only
 * its 6 rows are fetched from the table. `largest` breaks ties by ascending id while sorting by
 * descending size, so it needs its own index (a backward scan of `smallest`'s would reverse the
 * ties too).
 *
 * The name filters (substrings, any case) get an index built for substring search: pg_trgm's
 * GIN on PostgreSQL, an FTS5 trigram table on SQLite kept in step by triggers.
 */
const ORDERS: [string, string][] = [
  ['time', 'time_created, id'],
  ['size', 'size, id'],
  ['size_desc', 'size desc, id'],
];

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations must not depend on today's table types
export async function up(db: Kysely<any>): Promise<void> {
  for (const old of ['files_user_time', 'files_user_size', 'files_time', 'files_size']) await db.schema.dropIndex(old).execute();
  for (const [name, columns] of ORDERS) {
    await sql`create index ${sql.id(`files_user_${name}_id`)} on files (user_id, ${sql.raw(columns)})`.execute(db);
    await sql`create index ${sql.id(`files_${name}_id`)} on files (${sql.raw(columns)})`.execute(db);
  }
  if (isPostgres(db)) await trigramIndexes(db);
  else await ftsTable(db);
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- see up()
async function trigramIndexes(db: Kysely<any>): Promise<void> {
  // One extension per database, shared by every schema: created once, under a lock so two
  // processes migrating at the same moment do not both try.
  await sql`select pg_advisory_xact_lock(${0x7267_7274})`.execute(db);
  await sql`create extension if not exists pg_trgm with schema public`.execute(db);
  const found = await sql<{ schema: string }>`
    select n.nspname as schema from pg_extension e join pg_namespace n on n.oid = e.extnamespace where e.extname = 'pg_trgm'`.execute(db);
  const opclass = sql`${sql.id(found.rows[0]?.schema ?? 'public')}.gin_trgm_ops`;
  // The expressions are exactly the filters' `lower(column) like '%…%'` (db/index.ts).
  await sql`create index files_original_name_trgm on files using gin (lower(original_name) ${opclass})`.execute(db);
  await sql`create index files_actual_name_trgm on files using gin (lower(actual_name) ${opclass})`.execute(db);
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- see up()
async function ftsTable(db: Kysely<any>): Promise<void> {
  // Keyed by actual_name (unique, never changes) rather than the files table's rowid, which
  // VACUUM may renumber: the index then can never point at the wrong file.
  await sql`create virtual table files_names using fts5(original_name, actual_name, tokenize = 'trigram')`.execute(db);
  await sql`insert into files_names (original_name, actual_name) select original_name, actual_name from files`.execute(db);
  await nameTriggers(db);
}

/** The triggers that keep the FTS5 table in step with `files` (also restored by 2026-12-03-21's down). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- see up()
export async function nameTriggers(db: Kysely<any>): Promise<void> {
  await sql`create trigger files_names_insert after insert on files begin
    insert into files_names (original_name, actual_name) values (new.original_name, new.actual_name);
  end`.execute(db);
  // actual_name is 10 name characters and an extension (file-kind.ts), so its trigram phrase
  // finds its one row through the index.
  await sql`create trigger files_names_delete after delete on files begin
    delete from files_names where rowid in (
      select rowid from files_names where files_names match '{actual_name}: "' || old.actual_name || '"'
    ) and actual_name = old.actual_name;
  end`.execute(db);
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- see up()
export async function down(db: Kysely<any>): Promise<void> {
  if (isPostgres(db)) {
    await db.schema.dropIndex('files_original_name_trgm').execute();
    await db.schema.dropIndex('files_actual_name_trgm').execute();
  } else {
    await sql`drop trigger files_names_insert`.execute(db);
    await sql`drop trigger files_names_delete`.execute(db);
    await sql`drop table files_names`.execute(db);
  }
  for (const [name] of ORDERS) {
    await db.schema.dropIndex(`files_user_${name}_id`).execute();
    await db.schema.dropIndex(`files_${name}_id`).execute();
  }
  await db.schema.createIndex('files_user_time').on('files').columns(['user_id', 'time_created']).execute();
  await db.schema.createIndex('files_user_size').on('files').columns(['user_id', 'size']).execute();
  await db.schema.createIndex('files_time').on('files').column('time_created').execute();
  await db.schema.createIndex('files_size').on('files').column('size').execute();
}
