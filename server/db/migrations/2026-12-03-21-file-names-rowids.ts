import { sql, type Kysely } from 'kysely';
import { isPostgres } from './2026-11-22-20-file-list-counters.ts';
import { nameTriggers } from './2026-11-22-21-file-list-indexes.ts';

/**
 * SQLite: the name index's row of each file, kept by actual_name. The delete trigger found a
 * file's row in the FTS5 table by a MATCH on its name, and each such query costs more the more
 * deletes the index holds unmerged: removing an account of 20,000 files held the event loop for
 * 10 s in one transaction and 6 s in transactions of 500, 100,000 files 2 minutes (2026-12-03,
 * probe). The row is now looked up here, by the name's primary key. Keyed by actual_name, as the
 * index is, rather than by the files table's rowid, which VACUUM may renumber.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations must not depend on today's table types
export async function up(db: Kysely<any>): Promise<void> {
  if (isPostgres(db)) return;
  await sql`create table files_names_rowids (actual_name text primary key, names_rowid integer not null) without rowid`.execute(db);
  await sql`insert into files_names_rowids (actual_name, names_rowid) select actual_name, rowid from files_names`.execute(db);
  await sql`drop trigger files_names_insert`.execute(db);
  await sql`drop trigger files_names_delete`.execute(db);
  // Inside a trigger, last_insert_rowid() is the rowid of the trigger's own latest insert.
  await sql`create trigger files_names_insert after insert on files begin
    insert into files_names (original_name, actual_name) values (new.original_name, new.actual_name);
    insert into files_names_rowids (actual_name, names_rowid) values (new.actual_name, last_insert_rowid());
  end`.execute(db);
  await sql`create trigger files_names_delete after delete on files begin
    delete from files_names where rowid = (select names_rowid from files_names_rowids where actual_name = old.actual_name);
    delete from files_names_rowids where actual_name = old.actual_name;
  end`.execute(db);
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- see up()
export async function down(db: Kysely<any>): Promise<void> {
  if (isPostgres(db)) return;
  await sql`drop trigger files_names_insert`.execute(db);
  await sql`drop trigger files_names_delete`.execute(db);
  await nameTriggers(db);
  await sql`drop table files_names_rowids`.execute(db);
}
