import SQLite from 'better-sqlite3';
import { Kysely, SqliteDialect, sql } from 'kysely';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { reusingStatements } from '../../../server/db/sqlite-statements.ts';

interface Tables {
  t: { id: number; name: string };
}

/** Issue 9 "reuse prepared statements": SQLite's statements compiled once, answers unchanged. */
describe('reusingStatements (server/db/sqlite-statements.ts)', () => {
  let database: SQLite.Database;
  afterEach(() => {
    if (database.open) database.close();
  });

  function open(max?: number) {
    database = new SQLite(':memory:');
    database.exec("create table t (id integer primary key, name text); insert into t (name) values ('a'), ('b'), ('c')");
    const prepare = vi.spyOn(database, 'prepare');
    const wrapped = reusingStatements(database, max);
    return { wrapped, prepare, db: new Kysely<Tables>({ dialect: new SqliteDialect({ database: wrapped }) }) };
  }

  it('compiles a query once however often it runs, each run with its own values', async () => {
    const { db, prepare } = open();
    const byId = (id: number) => db.selectFrom('t').select('name').where('id', '=', id).executeTakeFirst();
    expect(await byId(1)).toEqual({ name: 'a' });
    const before = prepare.mock.calls.length;
    expect(await byId(2)).toEqual({ name: 'b' });
    expect(await byId(3)).toEqual({ name: 'c' });
    expect(await byId(4)).toBeUndefined();
    expect(prepare.mock.calls.length).toBe(before);
    await db.updateTable('t').set({ name: 'z' }).where('id', '=', 2).execute();
    expect(await byId(2)).toEqual({ name: 'z' });
  });

  it('sees a column added after the statement was kept', async () => {
    const { db } = open();
    const all = () => sql<Record<string, unknown>>`select * from t where id = 1`.execute(db);
    expect((await all()).rows).toEqual([{ id: 1, name: 'a' }]);
    await sql`alter table t add column size integer default 7`.execute(db);
    expect((await all()).rows).toEqual([{ id: 1, name: 'a', size: 7 }]);
  });

  it('keeps at most its bound of texts, the least recently used leaving first', () => {
    const { wrapped } = open(2);
    const one = wrapped.prepare('select 1');
    const two = wrapped.prepare('select 2');
    expect(wrapped.prepare('select 1')).toBe(one);
    wrapped.prepare('select 3');
    expect(wrapped.prepare('select 1')).toBe(one);
    expect(wrapped.prepare('select 2')).not.toBe(two);
  });

  it('gives a fresh statement while the kept one is still being iterated', () => {
    const { wrapped } = open();
    const text = 'select name from t order by id';
    const rows = wrapped.prepare(text).iterate([]);
    expect(rows.next().value).toEqual({ name: 'a' });
    expect(wrapped.prepare(text).all([])).toHaveLength(3);
    expect([...rows]).toEqual([{ name: 'b' }, { name: 'c' }]);
  });
});
