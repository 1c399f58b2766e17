import { sql, type Kysely } from 'kysely';
import { isPostgres } from './2026-11-22-20-file-list-counters.ts';
import { LOG_KEPT, logRules } from './2026-11-29-10-file-list-log.ts';

/**
 * PostgreSQL: the counting trigger runs once per delete statement instead of once per deleted
 * row. Per row, every file of a batch updated the site's count row and its owner's again, and
 * PostgreSQL writes a new version of a row at each update: the 500th delete of a transaction
 * walked past the 499 versions before it, twice. Removing an account of 18,000 files took 12 s,
 * and every upload of the site waited on the site's count row for up to 0.56 s at a time
 * (2026-12-04, probe). Now a statement updates each of those rows once, by the number of rows it
 * deleted, and logs them all with one insert.
 *
 * The log's entries are what the row trigger wrote, in id order: each deleted file takes the
 * next value of the site's counter and of its owner's (null when the owner's count row is
 * already gone), so a list that carries its anchors or its name counts over the log
 * (files/list-anchors.ts, files/name-counts.ts) cannot tell the two apart. SQLite has no
 * statement triggers; its row trigger updates rows in place and stays.
 *
 * The trigger and its function keep their names (files_count_delete), so the earlier
 * migrations' down() steps find them once this one's down() has put the row trigger back.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations must not depend on today's table types
export async function up(db: Kysely<any>): Promise<void> {
  if (!isPostgres(db)) return;
  await sql`drop trigger files_count_delete on files`.execute(db);
  await sql`create or replace function files_count_delete() returns trigger language plpgsql as $$
    declare
      deleted bigint;
      site bigint;
    begin
      select count(*) into deleted from gone;
      if deleted = 0 then return null; end if;
      update file_totals set file_count = file_count - deleted, changes = changes + deleted where id = 1
        returning changes into site;
      with owners as (select user_id, count(*) as n from gone group by user_id),
           bumped as (
             update file_counts c set file_count = c.file_count - o.n, changes = c.changes + o.n
               from owners o where c.user_id = o.user_id
               returning c.user_id, c.changes - o.n as prior)
      insert into file_list_log (changes, user_id, user_changes, file_id, size, time_created, delta, original_name, actual_name)
        select site - deleted + row_number() over (order by g.id),
               g.user_id, b.prior + row_number() over (partition by g.user_id order by g.id),
               g.id, g.size, g.time_created, -1, g.original_name, g.actual_name
        from gone g left join bumped b on b.user_id = g.user_id;
      delete from file_list_log where changes <= site - ${sql.raw(String(LOG_KEPT))};
      return null;
    end $$`.execute(db);
  await sql`create trigger files_count_delete after delete on files
    referencing old table as gone for each statement execute function files_count_delete()`.execute(db);
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- see up()
export async function down(db: Kysely<any>): Promise<void> {
  if (!isPostgres(db)) return;
  await sql`drop trigger files_count_delete on files`.execute(db);
  await sql`create or replace function files_count_delete() returns trigger language plpgsql as $$
    begin ${logRules(true).onDelete} return null; end $$`.execute(db);
  await sql`create trigger files_count_delete after delete on files for each row execute function files_count_delete()`.execute(db);
}
