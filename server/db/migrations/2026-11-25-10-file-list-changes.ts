import { sql, type Kysely, type RawBuilder } from 'kysely';
import { countingRules, isPostgres } from './2026-11-22-20-file-list-counters.ts';

/**
 * Issue 9, deep pages at a million files: the list keeps, per process, every 1,000th row's sort
 * key (files/list-anchors.ts) and must know when those went stale. `changes` counts every
 * insert, delete and sort-key update of an owner's files (`file_counts`) and of all files
 * (`file_totals`), bumped by the counting triggers in the same transaction as the change, so a
 * statement that sees an unchanged count sees exactly the rows the anchors were read from.
 *
 * It only grows: the site total is bumped first, and an owner's row starts from it when
 * (re)created, so an owner removed and re-added never shows a value an old anchor set holds.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations must not depend on today's table types
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('file_counts').addColumn('changes', 'bigint', (c) => c.notNull().defaultTo(0)).execute();
  await db.schema.alterTable('file_totals').addColumn('changes', 'bigint', (c) => c.notNull().defaultTo(0)).execute();
  const { onInsert, onDelete, onUpdate } = changeRules();
  await replaceCountingTriggers(db, onInsert, onDelete);
  await sortUpdateTrigger(db, onUpdate);
}

/** This migration's trigger bodies (restored by 2026-11-29-10's down()). */
export function changeRules() {
  const onInsert = sql`
    update file_totals set file_count = file_count + 1, changes = changes + 1 where id = 1;
    insert into file_counts (user_id, file_count, changes) values (new.user_id, 1, (select changes from file_totals where id = 1))
      on conflict (user_id) do update set file_count = file_counts.file_count + 1, changes = file_counts.changes + 1;`;
  const onDelete = sql`
    update file_totals set file_count = file_count - 1, changes = changes + 1 where id = 1;
    update file_counts set file_count = file_count - 1, changes = changes + 1 where user_id = old.user_id;`;
  // No code moves a file or changes its size or time today; if one ever does, the lists notice.
  const onUpdate = sql`
    update file_totals set changes = changes + 1 where id = 1;
    update file_counts set changes = changes + 1 where user_id = old.user_id or user_id = new.user_id;`;
  return { onInsert, onDelete, onUpdate };
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- see up()
export async function down(db: Kysely<any>): Promise<void> {
  const { onInsert, onDelete } = countingRules();
  await replaceCountingTriggers(db, onInsert, onDelete);
  await sortUpdateTrigger(db, null);
  await db.schema.alterTable('file_counts').dropColumn('changes').execute();
  await db.schema.alterTable('file_totals').dropColumn('changes').execute();
}

/**
 * The counting triggers of migration 2026-11-22-20, same names, given new bodies. Row bodies:
 * from migration 2026-12-04-10 on, PostgreSQL's delete trigger runs per statement, so a later
 * migration gives it a statement body of its own rather than calling this.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- see up()
export async function replaceCountingTriggers(db: Kysely<any>, onInsert: RawBuilder<unknown>, onDelete: RawBuilder<unknown>): Promise<void> {
  if (isPostgres(db)) {
    // The triggers call these functions by name: replacing the bodies is enough.
    await sql`create or replace function files_count_insert() returns trigger language plpgsql as $$
      begin ${onInsert} return null; end $$`.execute(db);
    await sql`create or replace function files_count_delete() returns trigger language plpgsql as $$
      begin ${onDelete} return null; end $$`.execute(db);
    return;
  }
  await sql`drop trigger files_count_insert`.execute(db);
  await sql`drop trigger files_count_delete`.execute(db);
  await sql`create trigger files_count_insert after insert on files begin ${onInsert} end`.execute(db);
  await sql`create trigger files_count_delete after delete on files begin ${onDelete} end`.execute(db);
}

/** The sort-key update trigger: created with `onUpdate`, dropped with null. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- see up()
async function sortUpdateTrigger(db: Kysely<any>, onUpdate: RawBuilder<unknown> | null): Promise<void> {
  if (isPostgres(db)) {
    if (onUpdate) {
      await sql`create function files_sort_update() returns trigger language plpgsql as $$
        begin ${onUpdate} return null; end $$`.execute(db);
      await sql`create trigger files_sort_update after update of size, time_created, user_id on files
        for each row execute function files_sort_update()`.execute(db);
    } else {
      await sql`drop trigger files_sort_update on files`.execute(db);
      await sql`drop function files_sort_update()`.execute(db);
    }
    return;
  }
  if (onUpdate) await sql`create trigger files_sort_update after update of size, time_created, user_id on files begin ${onUpdate} end`.execute(db);
  else await sql`drop trigger files_sort_update`.execute(db);
}
