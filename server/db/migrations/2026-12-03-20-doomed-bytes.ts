import type { Kysely } from 'kysely';

/**
 * Bytes whose rows are gone, kept until the store has let go of them (files/doomed-bytes.ts).
 * Removing an account deleted its rows and then every one of its objects at once, from a list
 * held in memory: a crash or a store that was down in between left the bytes in the store for
 * good, and an account of a million files put a million deletes in flight. The keys are now
 * written by the same transaction that deletes the rows, and reclaimed a batch at a time until
 * the store says each is gone.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations must not depend on today's table types
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('doomed_bytes')
    .addColumn('storage_key', 'text', (c) => c.primaryKey())
    // A listed file's previews (their keys follow from it, media/previews.ts); null for an upload.
    .addColumn('previews', 'text')
    // 'file': a stored object, deleted; 'upload': an unfinished upload's parts, discarded.
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('doomed_at', 'bigint', (c) => c.notNull())
    .execute();
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- see up()
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('doomed_bytes').execute();
}
