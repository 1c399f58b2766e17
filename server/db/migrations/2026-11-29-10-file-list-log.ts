import { sql, type Kysely } from 'kysely';
import { changeRules, replaceCountingTriggers } from './2026-11-25-10-file-list-changes.ts';

/**
 * Issue 9, deep pages after a change: a process's list anchors (files/list-anchors.ts) went
 * stale with every upload or delete, and the next deep page waited for a walk of the list as
 * long as the offset query's. Each insert and delete of a file now also records, in the same
 * trigger and transaction as the counters it bumps, which row came or went and the counter
 * values it left (`changes`: the site's, the primary key; `user_changes`: the owner's). A process
 * holding anchors at counter c reads the entries after c — exactly as many as the counter moved,
 * or it walks again — and moves its anchors by the rows that came or went before them.
 *
 * Sort-key updates record nothing (no code makes one): the counter moves without an entry, so
 * the count of entries falls short and the anchors are read again, as before this migration.
 *
 * Only the last LOG_KEPT entries of the site are kept (pruned by the same triggers through the
 * primary key, one index probe per change); a process further behind reads its anchors again.
 * `user_changes` is null when the owner's count row is already gone (a user's removal cascading
 * to their files), whose list nobody reads again.
 *
 * `file_list_anchors` keeps the anchors of each list's last walk (`list`: owner or `*`, and the
 * sort; a JSON array of [key, id, place]), so a process that has none — just started, or one
 * of many behind a load balancer — carries another's forward instead of walking the list too.
 */
export const LOG_KEPT = 10_000;

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations must not depend on today's table types
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('file_list_log')
    .addColumn('changes', 'bigint', (c) => c.primaryKey())
    .addColumn('user_id', 'text', (c) => c.notNull())
    .addColumn('user_changes', 'bigint')
    .addColumn('file_id', 'text', (c) => c.notNull())
    .addColumn('size', 'bigint', (c) => c.notNull())
    .addColumn('time_created', 'bigint', (c) => c.notNull())
    .addColumn('delta', 'integer', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('file_list_log_user').on('file_list_log').columns(['user_id', 'user_changes']).execute();
  await db.schema
    .createTable('file_list_anchors')
    .addColumn('list', 'text', (c) => c.primaryKey())
    .addColumn('user_id', 'text', (c) => c.references('users.id').onDelete('cascade'))
    .addColumn('changes', 'bigint', (c) => c.notNull())
    .addColumn('anchors', 'text', (c) => c.notNull())
    .execute();

  const { onInsert, onDelete } = logRules(false);
  await replaceCountingTriggers(db, onInsert, onDelete);
}

/**
 * The counting triggers' bodies with each change logged; `names` (migration 2026-12-03-10) also
 * logs the file's names, so a name filter's count can be carried forward too.
 */
export function logRules(names: boolean) {
  const { onInsert, onDelete } = changeRules();
  const logged = (row: 'new' | 'old', delta: 1 | -1) => {
    const r = sql.raw(row);
    const nameColumns = names ? sql`, original_name, actual_name` : sql``;
    const nameValues = names ? sql`, ${r}.original_name, ${r}.actual_name` : sql``;
    return sql`
    insert into file_list_log (changes, user_id, user_changes, file_id, size, time_created, delta${nameColumns})
      select t.changes, ${r}.user_id, (select c.changes from file_counts c where c.user_id = ${r}.user_id),
             ${r}.id, ${r}.size, ${r}.time_created, ${sql.raw(String(delta))}${nameValues}
      from file_totals t where t.id = 1;
    delete from file_list_log where changes <= (select changes from file_totals where id = 1) - ${sql.raw(String(LOG_KEPT))};`;
  };
  return { onInsert: sql`${onInsert} ${logged('new', 1)}`, onDelete: sql`${onDelete} ${logged('old', -1)}` };
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- see up()
export async function down(db: Kysely<any>): Promise<void> {
  const { onInsert, onDelete } = changeRules();
  await replaceCountingTriggers(db, onInsert, onDelete);
  await db.schema.dropTable('file_list_anchors').execute();
  await db.schema.dropTable('file_list_log').execute();
}
