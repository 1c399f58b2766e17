import type { Kysely } from 'kysely';
import { replaceCountingTriggers } from './2026-11-25-10-file-list-changes.ts';
import { logRules } from './2026-11-29-10-file-list-log.ts';

/**
 * Issue 9, a wide name filter after a change. A name filter's total is kept per state of its
 * list (files/name-counts.ts), and any upload or delete of the list made the next request count
 * every match again: "png" in 40 % of a million names, 0.4 s on SQLite and 0.8 s on PostgreSQL,
 * and on the all-files list every upload of the site is such a change. The log of the list's
 * changes now holds each file's names too, so a kept count is carried forward by the matches
 * among the files that came or went since, as the list's anchors are.
 *
 * Entries logged before this migration have no names: a count that would have to be carried
 * over one is counted afresh instead.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations must not depend on today's table types
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('file_list_log').addColumn('original_name', 'text').execute();
  await db.schema.alterTable('file_list_log').addColumn('actual_name', 'text').execute();
  const { onInsert, onDelete } = logRules(true);
  await replaceCountingTriggers(db, onInsert, onDelete);
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- see up()
export async function down(db: Kysely<any>): Promise<void> {
  const { onInsert, onDelete } = logRules(false);
  await replaceCountingTriggers(db, onInsert, onDelete);
  await db.schema.alterTable('file_list_log').dropColumn('actual_name').execute();
  await db.schema.alterTable('file_list_log').dropColumn('original_name').execute();
}
