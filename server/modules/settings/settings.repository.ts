import { sql } from 'kysely';
import type { Database, Dialect } from '../../db/index.ts';

export async function readSettings(db: Database): Promise<Map<string, string>> {
  const rows = await db.selectFrom('settings').select(['key', 'value']).execute();
  return new Map(rows.map((r) => [r.key, r.value]));
}

export async function writeSetting(db: Database, key: string, value: string): Promise<void> {
  await db
    .insertInto('settings')
    .values({ key, value })
    .onConflict((oc) => oc.column('key').doUpdateSet({ value }))
    .execute();
}

/**
 * Held by a transaction that checks settings against each other before writing one: two such
 * saves at once then run one after the other, so neither checks a value the other is replacing.
 * Plain reads go on. SQLite needs nothing: a process's one connection runs one transaction at a
 * time, and API processes that share a database share PostgreSQL (README "Deployment at scale").
 */
export async function lockSettings(trx: Database, dialect: Dialect): Promise<void> {
  if (dialect === 'postgres') await sql`lock table settings in share row exclusive mode`.execute(trx);
}

export async function listMimeTypes(db: Database): Promise<string[]> {
  const rows = await db.selectFrom('mime_types').select('mime').orderBy('mime').execute();
  return rows.map((r) => r.mime);
}
