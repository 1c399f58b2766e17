import type { Deps } from '../deps.ts';
import { newId, newSecret, nowSeconds } from '../lib/ids.ts';
import { hashPassword } from '../lib/passwords.ts';
import { DEFAULT_MIME_TYPES, DEFAULT_SETTINGS } from './settings/settings.service.ts';

/** Weekly invite allowance per role on a new site (design §6); admins change them in Site Settings. */
export const DEFAULT_INVITES_ALLOWED = { default: 1, trusted: 3, mod: 5, admin: 25 } as const;

export interface BootstrapResult {
  /** Set only when this start created the first admin: printed once, never stored in clear. */
  admin: { username: string; password: string; generated: boolean } | null;
  inviteKey: string | null;
}

/**
 * First start on an empty database (design §4): roles, default settings and MIME list, and —
 * if no admin exists — an admin and one invite key. Safe to run on every start and from
 * several processes at once: every insert ignores rows that already exist.
 */
export async function bootstrap(deps: Deps): Promise<BootstrapResult> {
  const { db, config } = deps;
  for (const [name, invites] of Object.entries(DEFAULT_INVITES_ALLOWED)) {
    await db.insertInto('roles').values({ id: newId(), name, invites_allowed: invites }).onConflict((oc) => oc.column('name').doNothing()).execute();
  }
  const existingSettings = await db.selectFrom('settings').select('key').execute();
  if (existingSettings.length === 0) {
    for (const [key, value] of Object.entries(DEFAULT_SETTINGS)) {
      await db.insertInto('settings').values({ key, value: String(value) }).onConflict((oc) => oc.column('key').doNothing()).execute();
    }
    for (const mime of DEFAULT_MIME_TYPES) {
      await db.insertInto('mime_types').values({ mime }).onConflict((oc) => oc.column('mime').doNothing()).execute();
    }
  }
  deps.settings.invalidate();

  const anyAdmin = await db.selectFrom('users').select('id').where('role', '=', 'admin').executeTakeFirst();
  if (anyAdmin) return { admin: null, inviteKey: null };

  const username = config.admin.username ?? 'admin';
  const generated = config.admin.password === null;
  const password = config.admin.password ?? newSecret(15);
  const now = nowSeconds();
  const id = newId();
  const inserted = await db
    .insertInto('users')
    .values({ id, username, username_lower: username.toLowerCase(), password_hash: await hashPassword(password), role: 'admin', banned: 0, time_created: now })
    .onConflict((oc) => oc.column('username_lower').doNothing())
    .executeTakeFirst();
  if (Number(inserted.numInsertedOrUpdatedRows ?? 0) === 0) {
    // A user already holds that name (or another process won the race): promote nobody silently.
    return { admin: null, inviteKey: null };
  }
  const inviteKey = newSecret(15);
  await db.insertInto('invites').values({ id: newId(), invite_key: inviteKey, created_by: id, claimed: 0, claimed_by: null, created_at: now, claimed_at: null, deleted_at: null }).execute();
  return { admin: { username, password, generated }, inviteKey };
}
