import type { Database, Dialect } from '../../db/index.ts';
import { newId, newSecret, nowSeconds, sha256Hex } from '../../lib/ids.ts';

export interface Caller {
  id: string;
  username: string;
  role: 'default' | 'trusted' | 'mod' | 'admin';
  banned: boolean;
  /** How the caller proved who they are: API keys open fewer doors (design §6). */
  via: 'session' | 'apikey';
  sessionId: string | null;
}

const userColumns = ['users.id', 'users.username', 'users.role', 'users.banned'] as const;

export async function findCallerBySessionToken(db: Database, token: string): Promise<Caller | null> {
  const row = await db
    .selectFrom('sessions')
    .innerJoin('users', 'users.id', 'sessions.user_id')
    .select([...userColumns, 'sessions.id as session_id'])
    .where('sessions.token_hash', '=', sha256Hex(token))
    .where('users.removing_since', 'is', null)
    .executeTakeFirst();
  if (!row) return null;
  return { id: row.id, username: row.username, role: row.role as Caller['role'], banned: row.banned === 1, via: 'session', sessionId: row.session_id };
}

export async function findCallerByApiKey(db: Database, key: string): Promise<Caller | null> {
  const row = await db
    .selectFrom('api_keys')
    .innerJoin('users', 'users.id', 'api_keys.user_id')
    .select(userColumns)
    .where('api_keys.key', '=', key)
    // An account being removed lost its sessions and keys when marked; one made in that moment is refused too.
    .where('users.removing_since', 'is', null)
    .executeTakeFirst();
  if (!row) return null;
  return { id: row.id, username: row.username, role: row.role as Caller['role'], banned: row.banned === 1, via: 'apikey', sessionId: null };
}

/** Creates a session and returns its token; only the token's hash is stored. */
export async function createSession(db: Database, userId: string): Promise<string> {
  const token = newSecret(32);
  const now = nowSeconds();
  await db
    .insertInto('sessions')
    .values({ id: newId(), user_id: userId, token_hash: sha256Hex(token), created_at: now, last_used_at: now })
    .execute();
  return token;
}

/**
 * A session for someone who just proved the password whose hash is `passwordHash`, or why not.
 * `password-changed`: it is no longer the account's. A password change (design §6 ends the other
 * sessions) landing between the check and this insert revoked every session there was, so a
 * session made after it with the old password would outlive it. `banned`: a ban (design §6 ends
 * every session) landed meanwhile, and a session made after its revocation would work again
 * after the unban. PostgreSQL: the user's row is read `for share`, so a change or ban under way
 * is waited for and then seen, and one that follows waits for this session to exist before it
 * revokes; SQLite runs one transaction at a time.
 */
export async function createSessionIfPasswordIs(
  db: Database,
  dialect: Dialect,
  userId: string,
  passwordHash: string,
): Promise<{ token: string } | { refused: 'password-changed' | 'banned' }> {
  return db.transaction().execute(async (trx) => {
    const q = trx.selectFrom('users').select(['password_hash', 'banned']).where('id', '=', userId).where('removing_since', 'is', null);
    const row = await (dialect === 'postgres' ? q.forShare() : q).executeTakeFirst();
    if (row?.password_hash !== passwordHash) return { refused: 'password-changed' };
    if (row.banned === 1) return { refused: 'banned' };
    return { token: await createSession(trx, userId) };
  });
}

export async function sessionExists(db: Database, sessionId: string): Promise<boolean> {
  return (await db.selectFrom('sessions').select('id').where('id', '=', sessionId).executeTakeFirst()) !== undefined;
}

export async function revokeSession(db: Database, sessionId: string): Promise<void> {
  await db.deleteFrom('sessions').where('id', '=', sessionId).execute();
}

/** Ends every session of a user, but `keep` (a password change keeps the caller signed in). */
export async function revokeUserSessions(db: Database, userId: string, keep: string | null = null): Promise<void> {
  let q = db.deleteFrom('sessions').where('user_id', '=', userId);
  if (keep) q = q.where('id', '!=', keep);
  await q.execute();
}

/** API keys carry a prefix so a credential is routed to the right table with one lookup. */
export const API_KEY_PREFIX = 'stash_';

/** Every credential we issue is base64url (API keys behind their prefix); nothing else can match. */
const CREDENTIAL_SHAPE = /^[A-Za-z0-9_-]{1,512}$/;

export async function findCaller(db: Database, credential: string): Promise<Caller | null> {
  // Anything else never reaches a query: PostgreSQL answers a NUL in text with an error (a 500).
  if (!CREDENTIAL_SHAPE.test(credential)) return null;
  return credential.startsWith(API_KEY_PREFIX) ? findCallerByApiKey(db, credential) : findCallerBySessionToken(db, credential);
}
