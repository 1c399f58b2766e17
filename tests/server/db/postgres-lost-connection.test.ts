import { sql } from 'kysely';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { openDatabase, type DbHandle } from '../../../server/db/index.ts';
import { isDatabaseUnavailable } from '../../../server/db/unavailable.ts';
import { createTestDatabase } from '../../helpers/pg-database.ts';
import { until } from '../../helpers/poll.ts';
import { startTcpProxy, type TcpProxy } from '../../helpers/tcp-proxy.ts';

/**
 * PostgreSQL ending a connection the server's pool holds (server/db/pg-pool.ts): a real
 * database, its backends ended with pg_terminate_backend as a restart or failover would, and a
 * loopback relay that keeps back the news of an end so a statement is sent on a connection that
 * is already gone.
 */
const BASE = process.env.TEST_DATABASE_URL;

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c().catch(() => {});
});

async function terminate(pid: number): Promise<void> {
  const admin = new pg.Client({ connectionString: BASE });
  await admin.connect();
  try {
    await admin.query('select pg_terminate_backend($1)', [pid]);
    // Gone from the server's side before the test goes on.
    await until(
      async () => (await admin.query('select count(*)::int as n from pg_stat_activity where pid = $1', [pid])).rows[0].n as number,
      (n) => n === 0,
    );
  } finally {
    await admin.end();
  }
}

const backendPid = async (db: DbHandle['db']) => (await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(db)).rows[0]!.pid;

/** A fresh database reached through a relay, with one pooled connection so the test knows which one a statement takes. */
async function throughRelay(poolSize = 1): Promise<{ handle: DbHandle; proxy: TcpProxy; lost: Error[] }> {
  const database = await createTestDatabase('stash_lost');
  cleanups.push(database.drop);
  const target = new URL(database.url);
  const proxy = await startTcpProxy(Number(target.port || 5432));
  cleanups.push(() => proxy.close());
  target.host = new URL(proxy.url).host;
  const lost: Error[] = [];
  const handle = openDatabase(target.toString(), { poolSize, onConnectionLost: (err) => lost.push(err) });
  cleanups.push(() => handle.close());
  await sql`create table notes (body text not null)`.execute(handle.db);
  return { handle, proxy, lost };
}

/**
 * Ends the pool's one connection while the relay keeps the news back, starts `statement` on it,
 * and lets the news through once the statement is on its way.
 */
async function sentOnEndedConnection<T>(handle: DbHandle, proxy: TcpProxy, statement: () => Promise<T>): Promise<PromiseSettledResult<T>> {
  const pid = await backendPid(handle.db);
  proxy.hold(true);
  await terminate(pid);
  const result = statement();
  await until(async () => proxy.sentWhileHeld(), (n) => n > 0);
  proxy.hold(false);
  const [settled] = await Promise.allSettled([result]);
  return settled!;
}

/**
 * Opens `count` connections in the pool of `handle` (as many statements at once), then ends the
 * first one with its end delivered, so the pool drops it and a loss is known; resolves with the
 * other connections' backends, still open.
 */
async function poolWithOneLost(handle: DbHandle, lost: Error[], count: number): Promise<number[]> {
  const pids = (
    await Promise.all(Array.from({ length: count }, () => sql<{ pid: number }>`select pg_backend_pid() as pid, pg_sleep(0.05)`.execute(handle.db)))
  ).map((r) => r.rows[0]!.pid);
  expect(new Set(pids).size).toBe(count);
  await terminate(pids[0]!);
  await until(async () => lost.length, (n) => n > 0);
  return pids.slice(1);
}

describe.skipIf(!BASE)('PostgreSQL ending connections the pool holds (server/db/pg-pool.ts)', () => {
  it('a connection ended while a transaction holds it fails that transaction as unavailable, and the process goes on', async () => {
    const lost: Error[] = [];
    const handle = openDatabase(BASE!, { onConnectionLost: (err) => lost.push(err) });
    cleanups.push(() => handle.close());
    const failure = await handle.db
      .transaction()
      .execute(async (trx) => {
        await terminate(await backendPid(trx));
        // Its end has reached the client while the transaction is between statements, as during
        // a chunk's write to storage: with nobody listening for it, this ended the process.
        expect(await until(async () => lost.length, (n) => n > 0)).toBeGreaterThan(0);
        await sql`select 1`.execute(trx);
      })
      .then(
        () => null,
        (err: unknown) => err,
      );
    expect(isDatabaseUnavailable(failure), String(failure)).toBe(true);
    expect((await sql<{ x: number }>`select 2 as x`.execute(handle.db)).rows).toEqual([{ x: 2 }]);
  });

  it('a read sent on a connection whose end is still on its way is asked again on a new one', async () => {
    const { handle, proxy } = await throughRelay();
    await sql`insert into notes (body) values ('kept')`.execute(handle.db);
    const read = await sentOnEndedConnection(handle, proxy, () => sql<{ body: string }>`select body from notes`.execute(handle.db));
    expect(read.status === 'fulfilled' ? read.value.rows : read.reason).toEqual([{ body: 'kept' }]);
  });

  it('a transaction whose start met such a connection runs whole on a new one', async () => {
    const { handle, proxy } = await throughRelay();
    const written = await sentOnEndedConnection(handle, proxy, () =>
      handle.db.transaction().execute(async (trx) => {
        await sql`insert into notes (body) values ('one')`.execute(trx);
        await sql`insert into notes (body) values ('two')`.execute(trx);
      }),
    );
    expect(written.status === 'rejected' ? written.reason : 'committed').toBe('committed');
    expect((await sql<{ body: string }>`select body from notes order by body`.execute(handle.db)).rows).toEqual([{ body: 'one' }, { body: 'two' }]);
  });

  it('a write is never sent twice: met by a lost connection it fails as unavailable, and the next request works', async () => {
    const { handle, proxy, lost } = await throughRelay();
    const write = await sentOnEndedConnection(handle, proxy, () => sql`insert into notes (body) values ('once')`.execute(handle.db));
    expect(write.status).toBe('rejected');
    expect(isDatabaseUnavailable(write.status === 'rejected' ? write.reason : null)).toBe(true);
    expect((await sql<{ n: number }>`select count(*)::int as n from notes`.execute(handle.db)).rows).toEqual([{ n: 0 }]);
    expect(await until(async () => lost.length, (n) => n > 0)).toBeGreaterThan(0);
  });

  it('once a lost connection is known, a write on a connection not heard from since checks it first and is written once', async () => {
    const { handle, proxy, lost } = await throughRelay(2);
    const [other] = await poolWithOneLost(handle, lost, 2);
    // The other one's end is still on its way when the write takes it, as when PostgreSQL ends
    // every connection at once and their ends arrive milliseconds apart.
    proxy.hold(true);
    await terminate(other!);
    const write = sql`insert into notes (body) values ('once')`.execute(handle.db);
    await until(async () => proxy.sentWhileHeld(), (n) => n > 0);
    proxy.hold(false);
    const [settled] = await Promise.allSettled([write]);
    expect(settled!.status === 'rejected' ? settled!.reason : 'written').toBe('written');
    expect((await sql<{ body: string }>`select body from notes`.execute(handle.db)).rows).toEqual([{ body: 'once' }]);
  });

  it('a read that meets one ended connection after another is asked again until a live one answers', async () => {
    const { handle, proxy, lost } = await throughRelay(3);
    await sql`insert into notes (body) values ('kept')`.execute(handle.db);
    const others = await poolWithOneLost(handle, lost, 3);
    // Both others ended, their ends still on the way: the read takes one, hears of its end, is
    // asked again on the other (idle, so the pool hands it out), and only then on a new one.
    proxy.hold(true);
    for (const pid of others) await terminate(pid);
    const read = sql<{ body: string }>`select body from notes`.execute(handle.db);
    await until(async () => proxy.sentWhileHeld(), (n) => n > 0);
    const firstAsked = proxy.sentWhileHeld();
    proxy.releaseAsked();
    await until(async () => proxy.sentWhileHeld(), (n) => n > firstAsked);
    proxy.hold(false);
    const [settled] = await Promise.allSettled([read]);
    expect(settled!.status === 'fulfilled' ? settled!.value.rows : settled!.reason).toEqual([{ body: 'kept' }]);
  });
});
