import type { Database } from '../../db/index.ts';

export function listRoles(db: Database): Promise<{ id: string; name: string; invites_allowed: number }[]> {
  return db.selectFrom('roles').select(['id', 'name', 'invites_allowed']).execute();
}

export async function setInvitesAllowed(db: Database, roleName: string, invitesAllowed: number): Promise<number> {
  const res = await db.updateTable('roles').set({ invites_allowed: invitesAllowed }).where('name', '=', roleName).executeTakeFirst();
  return Number(res.numUpdatedRows);
}

export async function addMimeTypes(db: Database, mimes: string[]): Promise<void> {
  if (mimes.length === 0) return;
  await db
    .insertInto('mime_types')
    .values(mimes.map((mime) => ({ mime })))
    .onConflict((oc) => oc.column('mime').doNothing())
    .execute();
}

export async function deleteMimeType(db: Database, mime: string): Promise<number> {
  const res = await db.deleteFrom('mime_types').where('mime', '=', mime).executeTakeFirst();
  return Number(res.numDeletedRows);
}
