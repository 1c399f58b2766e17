import { Readable } from 'node:stream';
import { sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import type { Database } from '../../../server/db/index.ts';
import { startBackgroundJobs } from '../../../server/jobs.ts';
import { takeLease } from '../../../server/job-lease.ts';
import { newId, nowSeconds } from '../../../server/lib/ids.ts';
import { AccountRemovals, markForRemoval } from '../../../server/modules/users/account-removals.ts';
import { until } from '../../helpers/poll.ts';
import { DIALECTS, createTestApp, type TestApp, type TestUser } from '../../helpers/test-app.ts';

/**
 * An admin removes an account (spec §4 admin/set/remove; users/account-removals.ts): hidden and
 * signed out at once, answered for while a large removal goes on, and finished by whichever
 * process comes next when the one removing it stops or dies midway.
 */
describe.each(DIALECTS)('account removals on %s', (dialect) => {
  let t: TestApp;
  let releaseHeld = () => {};
  afterEach(async () => {
    // A test that failed while holding a removal: the app's close waits for it.
    releaseHeld();
    await t?.close();
  });

  /** Holds a removal after its first batch of files until `release()`. */
  function heldAfterFirstBatch() {
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let reached!: () => void;
    const held = new Promise<void>((resolve) => (reached = resolve));
    releaseHeld = release;
    return { between: async (_db: Database) => (reached(), released), held, release };
  }

  /** `n` files of `owner`, the first with bytes in the store (key `${prefix}-key-0`). */
  async function filesOf(owner: TestUser, n: number, prefix: string) {
    await t.deps.storage.writeAt(`${prefix}-key-0`, 0, Readable.from([Buffer.from('hello')]));
    await t.deps.storage.finalize(`${prefix}-key-0`, 5);
    const rows = Array.from({ length: n }, (_, i) => ({
      id: newId(), actual_name: `${prefix}${String(i).padStart(6, '0')}.txt`, original_name: 'a.txt', user_id: owner.id, size: 5, mime_type: 'text/plain',
      width: null, height: null, time_created: nowSeconds(), storage_key: `${prefix}-key-${i}`, sha256: null,
    }));
    for (let i = 0; i < rows.length; i += 500) await t.deps.db.insertInto('files').values(rows.slice(i, i + 500)).execute();
  }
  const filesLeft = async (userId: string) => Number((await t.deps.db.selectFrom('files').select((eb) => eb.fn.countAll().as('n')).where('user_id', '=', userId).executeTakeFirstOrThrow()).n);
  const userRow = (userId: string) => t.deps.db.selectFrom('users').select(['id', 'removing_since']).where('id', '=', userId).executeTakeFirst();
  const held = async (key: string) => (await t.deps.storage.stat(key)) !== null;
  const admin = (path: string, body: Record<string, unknown> = {}) => t.call(path, body, { token: t.admin.token });

  it('answers before a large account is gone, the account signed out, hidden and its files unserved at once, and goes on to the end after the answer', async () => {
    const hold = heldAfterFirstBatch();
    t = await createTestApp(dialect, {}, { accountRemovals: { answerWithinMs: 100, between: hold.between } });
    const u = await t.createUser({ username: 'LeavingSoon' });
    const key = (await t.call<{ apiKey: { key: string } }>('/api/v1/auth/apikeys/generate', {}, { token: u.token })).body.apiKey.key;
    await filesOf(u, 1_200, 'gone');
    const usersBefore = (await admin('/api/v1/admin/get/allstats')).body as { stats: { totalUsers: number } };

    // The removal is held after its first 500 files: without the answer's time limit this call would wait for it.
    const res = await admin('/api/v1/admin/set/remove', { userId: u.id });
    expect(res).toMatchObject({ status: 200, body: { success: true } });
    expect((await userRow(u.id))?.removing_since).not.toBeNull();
    expect(await filesLeft(u.id)).toBeGreaterThan(0);

    // Nobody is in it any more: its session, its API key and its password all fail like unknown ones.
    expect((await t.call('/api/v1/auth/data', {}, { token: u.token })).status).toBe(401);
    expect((await t.call('/api/v1/auth/data', {}, { token: key })).status).toBe(401);
    const wrongPassword = await t.call('/api/v1/auth/login', { username: t.admin.username, password: 'not-the-password' });
    const login = await t.call('/api/v1/auth/login', { username: u.username, password: u.password });
    expect({ status: login.status, body: login.body }).toEqual({ status: 401, body: wrongPassword.body });
    // Gone from the admin's screens, and nothing more can be done to it.
    const listed = (await admin('/api/v1/admin/get/users', { page: 1, limit: 50, query: '', sortBy: 'time_created_desc', roleFilter: '', showBannedOnly: false })).body as { users: { _id: string }[]; totalUsers: number };
    expect(listed.users.map((x) => x._id)).not.toContain(u.id);
    expect(((await admin('/api/v1/admin/get/allstats')).body as { stats: { totalUsers: number } }).stats.totalUsers).toBe(usersBefore.stats.totalUsers - 1);
    expect((await admin('/api/v1/admin/set/ban', { userId: u.id })).status).toBe(404);
    expect(await admin('/api/v1/admin/set/remove', { userId: u.id })).toMatchObject({ status: 404, body: { success: false, error: 'User not found.' } });
    // Its files are no longer served, though a row and its bytes are still there.
    const waiting = await t.deps.db.selectFrom('files').select(['actual_name', 'storage_key']).where('user_id', '=', u.id).executeTakeFirstOrThrow();
    await t.deps.storage.writeAt(waiting.storage_key, 0, Readable.from([Buffer.from('hello')]));
    await t.deps.storage.finalize(waiting.storage_key, 5);
    expect((await t.files.inject({ method: 'GET', url: `/${waiting.actual_name}` })).statusCode).toBe(404);
    // Its name stays taken until the row goes.
    const register = await t.call('/api/v1/auth/register', { username: 'leavingsoon', password: 'password-1', invitekey: t.inviteKey });
    expect(register.status).toBe(409);

    hold.release();
    expect(await until(() => userRow(u.id), (row) => row === undefined)).toBeUndefined();
    expect(await filesLeft(u.id)).toBe(0);
    expect(await until(() => held('gone-key-0'), (has) => !has)).toBe(false);
  });

  it('waits for a small account: gone, rows and bytes, when the answer comes', async () => {
    t = await createTestApp(dialect);
    const u = await t.createUser();
    await filesOf(u, 20, 'small');
    expect(await admin('/api/v1/admin/set/remove', { userId: u.id })).toMatchObject({ status: 200, body: { success: true } });
    expect(await userRow(u.id)).toBeUndefined();
    expect(await held('small-key-0')).toBe(false);
  });

  it('a process stopping midway leaves the account hidden, and the next start finishes it', async () => {
    const hold = heldAfterFirstBatch();
    t = await createTestApp(dialect, {}, { accountRemovals: { answerWithinMs: 0, between: hold.between } });
    const u = await t.createUser();
    await filesOf(u, 1_200, 'stop');
    expect((await admin('/api/v1/admin/set/remove', { userId: u.id })).status).toBe(200);
    await hold.held;
    const stopped = t.deps.accountRemovals.stop();
    hold.release();
    await stopped;
    expect(await filesLeft(u.id)).toBe(700);
    expect((await userRow(u.id))?.removing_since).not.toBeNull();
    expect((await t.call('/api/v1/auth/login', { username: u.username, password: u.password })).status).toBe(401);

    // The next process: its jobs' first run at start, the lease given back by the one that stopped.
    const next = new AccountRemovals({ db: t.deps.db, dialect: t.deps.dialect, storage: t.deps.storage }, { holder: 'next-process' });
    const stopJobs = startBackgroundJobs({ ...t.deps, accountRemovals: next });
    try {
      expect(await until(() => userRow(u.id), (row) => row === undefined)).toBeUndefined();
      expect(await filesLeft(u.id)).toBe(0);
      expect(await until(() => held('stop-key-0'), (has) => !has)).toBe(false);
    } finally {
      await stopJobs();
    }
  });

  it('an account whose removal fails stays hidden and does not hold up the accounts removed after it', async () => {
    const logged: string[] = [];
    t = await createTestApp(dialect, {}, { accountRemovals: { log: (message) => void logged.push(message) } });
    const stuck = await t.createUser();
    const next = await t.createUser();
    await filesOf(stuck, 30, 'stuck');
    await filesOf(next, 30, 'after');
    // A database that refuses to delete the first account's row (a real error from the database).
    await refuseDeleting(stuck.id);
    expect(await markForRemoval(t.deps.db, stuck.id, nowSeconds() - 60)).toBe(true);

    expect(await admin('/api/v1/admin/set/remove', { userId: next.id })).toMatchObject({ status: 200, body: { success: true } });
    expect(await userRow(next.id)).toBeUndefined();
    expect(await held('after-key-0')).toBe(false);
    expect((await userRow(stuck.id))?.removing_since).not.toBeNull();
    expect((await t.call('/api/v1/auth/login', { username: stuck.username, password: stuck.password })).status).toBe(401);
    expect(logged).toEqual([expect.stringContaining(`removing account ${stuck.id} failed`)]);

    // Once the database lets it, the next run removes it.
    await allowDeleting();
    await t.deps.accountRemovals.drain();
    expect(await userRow(stuck.id)).toBeUndefined();
    expect(await filesLeft(stuck.id)).toBe(0);
  });

  async function refuseDeleting(userId: string) {
    if (dialect === 'postgres') {
      await sql`create function refuse_user_delete() returns trigger language plpgsql as $$ begin raise exception 'refused'; end $$`.execute(t.deps.db);
      await sql.raw(`create trigger refuse_user_delete before delete on users for each row when (old.id = '${userId}') execute function refuse_user_delete()`).execute(t.deps.db);
    } else {
      await sql.raw(`create trigger refuse_user_delete before delete on users when old.id = '${userId}' begin select raise(abort, 'refused'); end`).execute(t.deps.db);
    }
  }
  async function allowDeleting() {
    await sql.raw(dialect === 'postgres' ? 'drop trigger refuse_user_delete on users' : 'drop trigger refuse_user_delete').execute(t.deps.db);
  }

  it('a process that died midway holds the removal only until its lease runs out', async () => {
    t = await createTestApp(dialect);
    const u = await t.createUser();
    await filesOf(u, 30, 'dead');
    // The request marked the account, then its process died holding the lease.
    expect(await markForRemoval(t.deps.db, u.id)).toBe(true);
    expect(await takeLease(t.deps.db, 'remove-accounts', 'dead-process', nowSeconds(), 60)).toBe(true);

    const next = new AccountRemovals({ db: t.deps.db, dialect: t.deps.dialect, storage: t.deps.storage }, { holder: 'next-process' });
    await next.drain();
    expect(await filesLeft(u.id)).toBe(30);
    await t.deps.db.updateTable('job_leases').set({ expires_at: nowSeconds() }).where('name', '=', 'remove-accounts').execute();
    await next.drain();
    expect(await userRow(u.id)).toBeUndefined();
    expect(await held('dead-key-0')).toBe(false);
  });
});
