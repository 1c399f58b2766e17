import type { Database } from '../../db/index.ts';

export interface ApiKeyRow {
  id: string;
  key: string;
  created_at: number;
}

export function listApiKeys(db: Database, userId: string): Promise<ApiKeyRow[]> {
  return db.selectFrom('api_keys').select(['id', 'key', 'created_at']).where('user_id', '=', userId).orderBy('created_at').orderBy('id').execute();
}

export async function countApiKeys(db: Database, userId: string): Promise<number> {
  const row = await db.selectFrom('api_keys').select((eb) => eb.fn.countAll().as('n')).where('user_id', '=', userId).executeTakeFirstOrThrow();
  return Number(row.n);
}

export async function insertApiKey(db: Database, row: { id: string; user_id: string; key: string; created_at: number }): Promise<void> {
  await db.insertInto('api_keys').values(row).execute();
}

/** Deletes one of the user's keys, named by the key itself or by its id; returns how many went. */
export async function deleteOwnApiKey(db: Database, userId: string, keyOrId: string): Promise<number> {
  const res = await db
    .deleteFrom('api_keys')
    .where('user_id', '=', userId)
    .where((eb) => eb.or([eb('key', '=', keyOrId), eb('id', '=', keyOrId)]))
    .executeTakeFirst();
  return Number(res.numDeletedRows);
}
