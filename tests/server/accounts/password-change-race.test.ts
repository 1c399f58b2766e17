import { sql } from 'kysely';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { hashPassword } from '../../../server/lib/passwords.ts';
import type * as Passwords from '../../../server/lib/passwords.ts';
import { until } from '../../helpers/poll.ts';
import { DIALECTS, createTestApp, type TestApp } from '../../helpers/test-app.ts';

/**
 * The slow step of these races is the password check (argon2). A test holds the next one, after
 * it has answered, until it has made the change that races it: the interleaving is fixed rather
 * than timed, so the tests neither sleep nor flake. Every other check runs as it would.
 */
const heldCheck = vi.hoisted(() => ({ next: null as { reached: () => void; released: Promise<void> } | null }));
vi.mock('../../../server/lib/passwords.ts', async (importOriginal) => {
  const real = await importOriginal<typeof Passwords>();
  return {
    ...real,
    async verifyPassword(stored: string, password: string): Promise<boolean> {
      const ok = await real.verifyPassword(stored, password);
      const hold = heldCheck.next;
      heldCheck.next = null;
      if (hold) {
        hold.reached();
        await hold.released;
      }
      return ok;
    },
  };
});

/** Holds the next password check: `reached` once it has answered, and it returns on `release()`. */
function holdNextPasswordCheck(): { reached: Promise<void>; release: () => void } {
  let reached!: () => void;
  let release!: () => void;
  const hold = { reached: new Promise<void>((r) => (reached = r)), release: () => release() };
  heldCheck.next = { reached, released: new Promise<void>((r) => (release = r)) };
  return hold;
}

const sessionsOf = (t: TestApp, userId: string) => t.deps.db.selectFrom('sessions').select('id').where('user_id', '=', userId).execute();

/**
 * Design §6: a password change ends the account's other sessions. A sign-in with the old
 * password that was being checked while the password changed must not leave a session behind.
 */
describe.each(DIALECTS)('signing in while the password changes on %s', (dialect) => {
  let t: TestApp;
  afterEach(async () => t?.close());

  it('leaves no session made with the old password alive once the change has answered', async () => {
    t = await createTestApp(dialect);
    const u = await t.createUser();
    const login = () => t.call<{ token?: string }>('/api/v1/auth/login', { username: u.username, password: u.password });
    // Sign-ins with the old password, four at a time, until the change has answered: some are
    // checked before the change and write their session after it.
    let changed = false;
    const tokens: string[] = [];
    const signingIn = [0, 1, 2, 3].map(async () => {
      while (!changed) {
        const res = await login();
        if (res.status === 200 && res.body.token) tokens.push(res.body.token);
      }
    });
    await until(async () => tokens.length, (n) => n >= 4);
    const change = await t.call('/api/v1/utils/changepassword', { currentPassword: u.password, newPassword: 'a-brand-new-pass' }, { token: u.token });
    changed = true;
    await Promise.all(signingIn);
    expect(change.status).toBe(200);

    const alive: string[] = [];
    for (const token of tokens) if ((await t.call('/api/v1/auth/data', {}, { token })).status === 200) alive.push(token);
    expect(alive).toEqual([]);
    expect((await t.call('/api/v1/auth/data', {}, { token: u.token })).status).toBe(200);
  });
});

describe.skipIf(!DIALECTS.includes('postgres'))('signing in while the password changes on PostgreSQL, step by step', () => {
  let t: TestApp;
  afterEach(async () => t?.close());

  it('waits for a change under way and then refuses the old password', async () => {
    t = await createTestApp('postgres');
    const u = await t.createUser();
    const newHash = await hashPassword('a-brand-new-pass');
    let answer: Promise<{ status: number; body: { token?: string; error?: { error?: string } } }> | undefined;
    // The change, as setPassword makes it, held open: the sign-in has read the old hash and
    // checked the password against it, and now waits for the user's row.
    await t.deps.db.transaction().execute(async (trx) => {
      await trx.updateTable('users').set({ password_hash: newHash }).where('id', '=', u.id).execute();
      await trx.deleteFrom('sessions').where('user_id', '=', u.id).execute();
      const holder = (await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(trx)).rows[0]!.pid;
      answer = t.call('/api/v1/auth/login', { username: u.username, password: u.password });
      // Waiting for this transaction, and only that: other tests share the database.
      const waiting = await until(
        async () => (await sql<{ n: string }>`select count(*) as n from pg_stat_activity where ${holder} = any(pg_blocking_pids(pid))`.execute(t.deps.db)).rows[0]!.n,
        (n) => Number(n) > 0,
      );
      expect(Number(waiting)).toBe(1);
    });
    const res = await answer!;
    expect(res.status).toBe(401);
    expect(res.body.error?.error).toBe('Invalid username or password.');
    expect(await t.deps.db.selectFrom('sessions').select('id').where('user_id', '=', u.id).execute()).toEqual([]);
    expect((await t.call('/api/v1/auth/login', { username: u.username, password: 'a-brand-new-pass' })).status).toBe(200);
  });
});

/** Design §6: a ban ends all of the user's sessions, so none may be made after it by a sign-in under way. */
describe.each(DIALECTS)('signing in while the account is banned on %s', (dialect) => {
  let t: TestApp;
  afterEach(async () => t?.close());

  it('refuses a sign-in whose password was checked before the ban with 403, and leaves no session to come back at the unban', async () => {
    t = await createTestApp(dialect);
    const u = await t.createUser();
    const check = holdNextPasswordCheck();
    const login = t.call<{ token?: string }>('/api/v1/auth/login', { username: u.username, password: u.password });
    // The sign-in has read the account, not yet banned, and checked the password.
    await check.reached;
    expect((await t.call('/api/v1/admin/set/ban', { userId: u.id }, { token: t.admin.token })).body).toMatchObject({ banned: true });
    check.release();
    const res = await login;
    expect(res.status).toBe(403);
    expect(res.body).toEqual({ success: false, error: { error: 'Your account has been banned.' } });
    expect(await sessionsOf(t, u.id)).toEqual([]);
    expect((await t.call('/api/v1/admin/set/ban', { userId: u.id }, { token: t.admin.token })).body).toMatchObject({ banned: false });
    expect(await sessionsOf(t, u.id)).toEqual([]);
  });
});

/**
 * Design §6: an admin's reset ends the user's sessions; a change the user's session had checked
 * against the old password must not undo it (a stolen session would keep the account).
 */
describe.each(DIALECTS)('changing the password while it is reset on %s', (dialect) => {
  let t: TestApp;
  afterEach(async () => t?.close());

  it("refuses a change checked before an admin's reset with 401, and the reset password holds", async () => {
    t = await createTestApp(dialect);
    const u = await t.createUser({ password: 'old-password-1' });
    const check = holdNextPasswordCheck();
    const change = t.call('/api/v1/utils/changepassword', { currentPassword: 'old-password-1', newPassword: 'racing-pass-1' }, { token: u.token });
    await check.reached;
    expect((await t.call('/api/v1/admin/update/userpass', { userId: u.id, newPassword: 'admin-reset-1' }, { token: t.admin.token })).status).toBe(200);
    check.release();
    const res = await change;
    // The reset ended the session that asked: the answer any call with it now gets.
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ success: false, error: 'Your session has expired. Please sign in again.' });
    expect((await t.call('/api/v1/auth/login', { username: u.username, password: 'racing-pass-1' })).status).toBe(401);
    expect((await t.call('/api/v1/auth/login', { username: u.username, password: 'admin-reset-1' })).status).toBe(200);
  });

  it('of two changes from one session checked against the same password, refuses the later with 409 and keeps the first', async () => {
    t = await createTestApp(dialect);
    const u = await t.createUser({ password: 'old-password-1' });
    const check = holdNextPasswordCheck();
    const late = t.call('/api/v1/utils/changepassword', { currentPassword: 'old-password-1', newPassword: 'late-pass-1' }, { token: u.token });
    await check.reached;
    const first = await t.call('/api/v1/utils/changepassword', { currentPassword: 'old-password-1', newPassword: 'first-pass-1' }, { token: u.token });
    expect(first.status).toBe(200);
    check.release();
    const res = await late;
    expect(res.status).toBe(409);
    expect(res.body).toEqual({
      success: false,
      error: 'Your password was changed elsewhere while this change was checked, so it was not applied. Try again with the current password.',
    });
    // Still signed in: a 409 does not sign the client out, and the session is the one the first change kept.
    expect((await t.call('/api/v1/auth/data', {}, { token: u.token })).status).toBe(200);
    expect((await t.call('/api/v1/auth/login', { username: u.username, password: 'late-pass-1' })).status).toBe(401);
    expect((await t.call('/api/v1/auth/login', { username: u.username, password: 'first-pass-1' })).status).toBe(200);
  });
});
