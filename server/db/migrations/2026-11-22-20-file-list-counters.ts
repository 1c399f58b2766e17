import { PostgresAdapter, sql, type Kysely } from 'kysely';

/**
 * Issue 9, lists at a million files: the pager's `totalImages` came from `count(*)` over the
 * owner's rows on every page (70–100 ms at 1M files). Counts are now kept by triggers in the
 * same transaction as every insert and delete of a file — including the cascade when a user is
 * removed — so they can never drift from the rows, whoever writes them.
 *
 * - `file_counts`: files per owner (one row per user who has files).
 * - `file_totals`: one row (`id` 1) with the number of files on the site (the admin list).
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations must not depend on today's table types
export async function up(db: Kysely<any>): Promise<void> {
  const postgres = isPostgres(db);
  await db.schema
    .createTable('file_counts')
    .addColumn('user_id', 'text', (c) => c.primaryKey().references('users.id').onDelete('cascade'))
    .addColumn('file_count', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema
    .createTable('file_totals')
    .addColumn('id', 'integer', (c) => c.primaryKey())
    .addColumn('file_count', 'bigint', (c) => c.notNull())
    .execute();
  await sql`insert into file_counts (user_id, file_count) select user_id, count(*) from files group by user_id`.execute(db);
  await sql`insert into file_totals (id, file_count) select 1, count(*) from files`.execute(db);

  const { onInsert, onDelete } = countingRules();
  if (postgres) {
    await sql`create function files_count_insert() returns trigger language plpgsql as $$
      begin ${onInsert} return null; end $$`.execute(db);
    await sql`create function files_count_delete() returns trigger language plpgsql as $$
      begin ${onDelete} return null; end $$`.execute(db);
    await sql`create trigger files_count_insert after insert on files for each row execute function files_count_insert()`.execute(db);
    await sql`create trigger files_count_delete after delete on files for each row execute function files_count_delete()`.execute(db);
  } else {
    await sql`create trigger files_count_insert after insert on files begin ${onInsert} end`.execute(db);
    await sql`create trigger files_count_delete after delete on files begin ${onDelete} end`.execute(db);
  }
}

/** Counting rules, shared by both dialects' trigger bodies (and restored by 2026-11-25-10's down()). */
export function countingRules() {
  const onInsert = sql`
    insert into file_counts (user_id, file_count) values (new.user_id, 1)
      on conflict (user_id) do update set file_count = file_counts.file_count + 1;
    update file_totals set file_count = file_count + 1 where id = 1;`;
  // A user removed with their files: the cascade deletes the user's count row too; the
  // update then finds nothing, which is right.
  const onDelete = sql`
    update file_counts set file_count = file_count - 1 where user_id = old.user_id;
    update file_totals set file_count = file_count - 1 where id = 1;`;
  return { onInsert, onDelete };
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- see up()
export async function down(db: Kysely<any>): Promise<void> {
  const postgres = isPostgres(db);
  await sql`drop trigger files_count_insert${postgres ? sql` on files` : sql``}`.execute(db);
  await sql`drop trigger files_count_delete${postgres ? sql` on files` : sql``}`.execute(db);
  if (postgres) {
    await sql`drop function files_count_insert()`.execute(db);
    await sql`drop function files_count_delete()`.execute(db);
  }
  await db.schema.dropTable('file_totals').execute();
  await db.schema.dropTable('file_counts').execute();
}

/** The dialect a migration runs on (one migration file serves both, design §1). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- see up()
export function isPostgres(db: Kysely<any>): boolean {
  return db.getExecutor().adapter instanceof PostgresAdapter;
}
