import { sql } from 'kysely';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type * as Passwords from '../../../server/lib/passwords.ts';
import { markForRemoval } from '../../../server/modules/users/account-removals.ts';
import { until } from '../../helpers/poll.ts';
import { DIALECTS, createTestApp, type TestApp, type TestUser } from '../../helpers/test-app.ts';
import { snapshot } from './fixtures.ts';

/**
 * Registration hashes the password after its cheap checks and before the transaction that
 * claims the key. A test holds the next hash there, until it has banned the key's creator: the
 * interleaving is fixed rather than timed.
 */
const heldHash = vi.hoisted(() => ({ next: null as { reached: () => void; released: Promise<void> } | null }));
vi.mock('../../../server/lib/passwords.ts', async (importOriginal) => {
  const real = await importOriginal<typeof Passwords>();
  return {
    ...real,
    async hashPassword(password: string): Promise<string> {
      const hash = await real.hashPassword(password);
      const hold = heldHash.next;
      heldHash.next = null;
      if (hold) {
        hold.reached();
        await hold.released;
      }
      return hash;
    },
  };
});

function holdNextHash(): { reached: Promise<void>; release: () => void } {
  let reached!: () => void;
  let release!: () => void;
  const hold = { reached: new Promise<void>((r) => (reached = r)), release: () => release() };
  heldHash.next = { reached, released: new Promise<void>((r) => (release = r)) };
  return hold;
}

const INVALID = { success: false, error: 'Invalid or already used invite key.' };

/**
 * "Nobody gets in where they don't belong" (server/README.md "Invites of banned or removed
 * accounts"): a key lets someone in only while its creator is a live account that is not banned.
 */
describe.each(DIALECTS)('registering with the invite of a banned or removed account on %s', (dialect) => {
  let t: TestApp;
  afterEach(async () => t?.close());

  const admin = <T = Record<string, unknown>>(path: string, body: Record<string, unknown> = {}) => t.call<T>(path, body, { token: t.admin.token });
  const register = (username: string, invitekey: string) => t.call('/api/v1/auth/register', { username, password: 'password-1', invitekey });
  const inviteRow = (key: string) => t.deps.db.selectFrom('invites').select(['claimed', 'claimed_by', 'created_by']).where('invite_key', '=', key).executeTakeFirstOrThrow();

  /** `n` keys `inviter` made through utils/invites, as the app makes them. */
  async function keysOf(inviter: TestUser, n = 1): Promise<string[]> {
    expect((await admin('/api/v1/admin/set/uploadlimit', { roleName: 'default', invitesAllowed: n })).status).toBe(200);
    const keys: string[] = [];
    for (let i = 0; i < n; i++) keys.push((await t.call<{ inviteKey: string }>('/api/v1/utils/invites', {}, { token: inviter.token })).body.inviteKey);
    return keys;
  }
  const setBan = async (user: TestUser, banned: boolean) => expect((await admin('/api/v1/admin/set/ban', { userId: user.id })).body).toMatchObject({ banned });

  it('refuses the invite of a banned creator as an invalid key, creating nobody and leaving the key unclaimed', async () => {
    t = await createTestApp(dialect);
    const inviter = await t.createUser({ username: 'Inviter' });
    const [key] = await keysOf(inviter);
    await setBan(inviter, true);
    const before = await snapshot(t);

    const res = await register('newcomer', key!);
    expect({ status: res.status, body: res.body }).toEqual({ status: 400, body: INVALID });
    // The same answer as a key that never existed: the refusal does not tell that the creator was banned.
    const unknown = await register('newcomer', 'made-up-key');
    expect({ status: unknown.status, body: unknown.body }).toEqual({ status: res.status, body: res.body });
    // Even with a taken name it is the key that is refused (400), as for any bad key, not the name (409).
    expect((await register('ADMIN', key!)).body).toEqual(INVALID);
    expect(await snapshot(t)).toBe(before);

    // The invite logs still show the key as it is: the banned user's, unclaimed.
    const logs = await admin<{ invites: unknown[] }>('/api/v1/admin/get/invitelogs', { filters: { inviteKey: key } });
    expect(logs.status).toBe(200);
    expect(logs.body.invites).toEqual([expect.objectContaining({ inviteKey: key, createdBy: 'Inviter', claimed: false, claimedBy: null })]);
  });

  it('lets the same invite in once the creator is unbanned', async () => {
    t = await createTestApp(dialect);
    const inviter = await t.createUser();
    const [key] = await keysOf(inviter);
    await setBan(inviter, true);
    expect((await register('newcomer', key!)).status).toBe(400);

    await setBan(inviter, false);
    const res = await register('newcomer', key!);
    expect({ status: res.status, body: res.body }).toEqual({ status: 200, body: { success: true, message: 'Account has been created!' } });
    const newcomer = await t.deps.db.selectFrom('users').select('id').where('username', '=', 'newcomer').executeTakeFirstOrThrow();
    expect(await inviteRow(key!)).toMatchObject({ claimed: 1, claimed_by: newcomer.id });
    expect((await t.call('/api/v1/auth/login', { username: 'newcomer', password: 'password-1' })).status).toBe(200);

    // The creator (signed out by the ban) signs in again and sees the key claimed in their own list.
    const login = await t.call<{ token: string }>('/api/v1/auth/login', { username: inviter.username, password: inviter.password });
    const own = await t.call<{ invites: unknown[] }>('/api/v1/manage/invites', { page: 1, limit: 8, filters: {} }, { token: login.body.token });
    expect(own.status).toBe(200);
    expect(own.body.invites).toEqual([expect.objectContaining({ inviteKey: key, claimed: true, claimedBy: 'newcomer' })]);
  });

  it('still lets in with the invite of an account in good standing, whoever else is banned', async () => {
    t = await createTestApp(dialect);
    const inviter = await t.createUser();
    const [key] = await keysOf(inviter);
    await setBan(await t.createUser(), true);
    expect((await register('newcomer', key!)).status).toBe(200);
    expect(await inviteRow(key!)).toMatchObject({ claimed: 1, created_by: inviter.id });
    // The bootstrap's key, the admin's, too.
    expect((await register('another', t.inviteKey)).status).toBe(200);
  });

  it('refuses the invites of an account being removed, and of one removed', async () => {
    t = await createTestApp(dialect);
    const inviter = await t.createUser();
    const [first, second] = await keysOf(inviter, 2);
    expect(await markForRemoval(t.deps.db, inviter.id)).toBe(true);
    let before = await snapshot(t);
    expect((await register('newcomer', first!)).body).toEqual(INVALID);
    expect(await snapshot(t)).toBe(before);

    await t.deps.accountRemovals.drain();
    // Gone: its keys stay, with no creator.
    expect(await inviteRow(second!)).toMatchObject({ claimed: 0, created_by: null });
    before = await snapshot(t);
    expect((await register('newcomer', second!)).body).toEqual(INVALID);
    expect(await snapshot(t)).toBe(before);
  });

  it('refuses a registration whose key was checked before its creator was banned', async () => {
    t = await createTestApp(dialect);
    const inviter = await t.createUser();
    const [key] = await keysOf(inviter);
    const hash = holdNextHash();
    const answer = register('newcomer', key!);
    // The key has passed registration's first check, its creator not yet banned.
    await hash.reached;
    await setBan(inviter, true);
    hash.release();
    expect((await answer).body).toEqual(INVALID);
    expect(await t.deps.db.selectFrom('users').select('id').where('username_lower', '=', 'newcomer').execute()).toEqual([]);
    expect(await inviteRow(key!)).toMatchObject({ claimed: 0, claimed_by: null });
  });
});

describe.skipIf(!DIALECTS.includes('postgres'))('registering while the key’s creator is banned on PostgreSQL, step by step', () => {
  let t: TestApp;
  afterEach(async () => t?.close());

  it('waits for a ban under way and then refuses the key', async () => {
    t = await createTestApp('postgres');
    const inviter = await t.createUser();
    await t.call('/api/v1/admin/set/uploadlimit', { roleName: 'default', invitesAllowed: 1 }, { token: t.admin.token });
    const key = (await t.call<{ inviteKey: string }>('/api/v1/utils/invites', {}, { token: inviter.token })).body.inviteKey;
    let answer: ReturnType<TestApp['call']> | undefined;
    // The ban, as toggleBan makes it, held open: the registration has passed its first check
    // (the ban is not committed) and now waits for the creator's row in its transaction.
    await t.deps.db.transaction().execute(async (trx) => {
      await trx.updateTable('users').set({ banned: 1 }).where('id', '=', inviter.id).execute();
      await trx.deleteFrom('sessions').where('user_id', '=', inviter.id).execute();
      const holder = (await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(trx)).rows[0]!.pid;
      answer = t.call('/api/v1/auth/register', { username: 'newcomer', password: 'password-1', invitekey: key });
      // Waiting for this transaction, and only that: other tests share the database.
      const waiting = await until(
        async () => (await sql<{ n: string }>`select count(*) as n from pg_stat_activity where ${holder} = any(pg_blocking_pids(pid))`.execute(t.deps.db)).rows[0]!.n,
        (n) => Number(n) > 0,
      );
      expect(Number(waiting)).toBe(1);
    });
    const res = await answer!;
    expect({ status: res.status, body: res.body }).toEqual({ status: 400, body: INVALID });
    expect(await t.deps.db.selectFrom('users').select('id').where('username_lower', '=', 'newcomer').execute()).toEqual([]);
    expect(await t.deps.db.selectFrom('invites').select('claimed').where('invite_key', '=', key).executeTakeFirstOrThrow()).toEqual({ claimed: 0 });
  });
});
