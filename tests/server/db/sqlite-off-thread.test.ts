import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CompiledQuery, sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { openDatabase, migrate, type DbHandle } from '../../../server/db/index.ts';
import { OFF_THREAD_ROWS, offThreadReads, readBig, readingThreadStarted } from '../../../server/db/sqlite-off-thread.ts';
import { preloadNameFilters } from '../../../server/modules/files/files.repository.ts';

/**
 * Issue 9: on SQLite a read of many rows runs on a thread of its own (server/db/sqlite-off-thread.ts),
 * so the process goes on answering everyone else meanwhile; its answers are the main
 * connection's, and a read it cannot do there is done on the main connection.
 */
describe('reads of many rows off the event loop (SQLite)', () => {
  let handle: DbHandle;
  let dir: string;
  afterEach(async () => {
    await handle?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  async function open() {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'stash-off-thread-'));
    handle = openDatabase(`sqlite://${path.join(dir, 'stash.db')}`);
    await migrate(handle.db);
    return handle.db;
  }

  /** A statement that takes a while: counting up to `n` in SQLite itself. */
  const counting = (n: number) => {
    const text = `with recursive c(i) as (select 1 union all select i + 1 from c where i < ${n}) select count(*) as n from c`;
    return { compile: () => CompiledQuery.raw(text), execute: async () => (await sql.raw<{ n: number }>(text).execute(handle.db)).rows };
  };

  it('starts the thread before the first request on a site whose whole-site reads go there, and not on a smaller one', async () => {
    const db = await open();
    await preloadNameFilters(db);
    expect(readingThreadStarted(db)).toBe(false);
    // The site's kept count is what the start goes by (rows themselves are not needed for it).
    await db.updateTable('file_totals').set({ file_count: OFF_THREAD_ROWS }).where('id', '=', 1).execute();
    await preloadNameFilters(db);
    expect(readingThreadStarted(db)).toBe(true);
    // And it reads: the same answer as the main connection.
    expect(await readBig(db, counting(10), OFF_THREAD_ROWS)).toEqual([{ n: 10 }]);
  });

  it('answers as the main connection does, with what was committed before it was asked', async () => {
    const db = await open();
    await db.insertInto('roles').values({ id: 'r-test', name: 'tester', invites_allowed: 3 }).execute();
    const query = db.selectFrom('roles').select(['name', 'invites_allowed']).where('id', '=', 'r-test');
    const before = offThreadReads();
    expect(await readBig(db, query, OFF_THREAD_ROWS)).toEqual(await query.execute());
    expect(offThreadReads()).toBe(before + 1);
    expect(await readBig(db, query, OFF_THREAD_ROWS)).toEqual([{ name: 'tester', invites_allowed: 3 }]);
    // A small read stays on the main connection: the hop would cost more than the read.
    await readBig(db, query, OFF_THREAD_ROWS - 1);
    expect(offThreadReads()).toBe(before + 2);
  });

  it('lets the event loop run while it reads', async () => {
    const db = await open();
    let ticks = 0;
    const timer = setInterval(() => ticks++, 5);
    try {
      const before = offThreadReads();
      // Millions of steps: a second or so, during which the main thread is free.
      expect(await readBig(db, counting(3_000_000), Infinity)).toEqual([{ n: 3_000_000 }]);
      expect(offThreadReads()).toBe(before + 1);
      expect(ticks).toBeGreaterThan(0);
      // The same statement on the main connection holds the loop: no tick until it is done.
      ticks = 0;
      await counting(3_000_000).execute();
      expect(ticks).toBe(0);
    } finally {
      clearInterval(timer);
    }
  });

  it('reports a statement the database refuses as the main connection does', async () => {
    const db = await open();
    const broken = { compile: () => CompiledQuery.raw('select * from no_such_table'), execute: async () => (await sql.raw('select * from no_such_table').execute(db)).rows };
    await expect(readBig(db, broken, Infinity)).rejects.toThrow(/no such table/);
  });

  it('keeps an in-memory database on its one connection', async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'stash-off-thread-'));
    handle = openDatabase('sqlite::memory:');
    const before = offThreadReads();
    expect(await readBig(handle.db, counting(10), Infinity)).toEqual([{ n: 10 }]);
    expect(offThreadReads()).toBe(before);
  });
});
