import { sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { hashPassword } from '../../../server/lib/passwords.ts';
import { until } from '../../helpers/poll.ts';
import { DIALECTS, createTestApp, type TestApp } from '../../helpers/test-app.ts';

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
