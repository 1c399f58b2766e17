import type { Database } from '../../db/index.ts';

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

export async function listMimeTypes(db: Database): Promise<string[]> {
  const rows = await db.selectFrom('mime_types').select('mime').orderBy('mime').execute();
  return rows.map((r) => r.mime);
}
