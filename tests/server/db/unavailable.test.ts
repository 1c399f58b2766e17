import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import { sql } from 'kysely';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { openDatabase } from '../../../server/db/index.ts';
import { isDatabaseUnavailable } from '../../../server/db/unavailable.ts';
import { freePort } from '../../helpers/free-port.ts';

/** What a driver throws, caught: the errors are the real drivers' own, not built by hand. */
async function thrown(work: () => unknown): Promise<unknown> {
  try {
    await work();
  } catch (err) {
    return err;
  }
  throw new Error('expected an error');
}

describe('isDatabaseUnavailable (server/db/unavailable.ts): 503 for the database, 500 for a wrong statement', () => {
  const open: SQLite.Database[] = [];
  afterEach(() => {
    for (const db of open.splice(0)) db.close();
  });

  it('SQLite locked by another writer past busy_timeout is unavailable; a statement SQLite rejects is not', async () => {
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'stash-busy-')), 'db.sqlite');
    const [writer, other] = [new SQLite(file), new SQLite(file)];
    open.push(writer, other);
    writer.exec('create table t (id integer primary key)');
    other.pragma('busy_timeout = 0');
    writer.exec('begin immediate');
    expect(isDatabaseUnavailable(await thrown(() => other.exec('insert into t default values')))).toBe(true);
    writer.exec('rollback');
    expect(isDatabaseUnavailable(await thrown(() => other.exec('select * from no_such_table')))).toBe(false);
  });

  it('PostgreSQL that refuses the connection is unavailable', async () => {
    const client = new pg.Client({ connectionString: `postgres://postgres@127.0.0.1:${await freePort()}/none` });
    expect(isDatabaseUnavailable(await thrown(() => client.connect()))).toBe(true);
  });

  it('a database host that takes the connection and never answers fails the query (unavailable) instead of holding it forever', async () => {
    const sockets: net.Socket[] = [];
    const silent = net.createServer((socket) => sockets.push(socket));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const { port } = silent.address() as net.AddressInfo;
    const handle = openDatabase(`postgres://postgres@127.0.0.1:${port}/stash`, { connectTimeoutMs: 300 });
    try {
      const err = await thrown(() => sql`select 1`.execute(handle.db));
      expect(isDatabaseUnavailable(err)).toBe(true);
      expect(sockets.length).toBeGreaterThan(0);
    } finally {
      await handle.close();
      for (const s of sockets) s.destroy();
      await new Promise((resolve) => silent.close(resolve));
    }
  });

  it.skipIf(!process.env.TEST_DATABASE_URL)('PostgreSQL answering a wrong statement is not unavailable; a database that does not exist is', async () => {
    const client = new pg.Client({ connectionString: process.env.TEST_DATABASE_URL });
    await client.connect();
    try {
      expect(isDatabaseUnavailable(await thrown(() => client.query('select from no_such_table')))).toBe(false);
      expect(isDatabaseUnavailable(await thrown(() => client.query('select 1/0')))).toBe(false);
    } finally {
      await client.end();
    }
    const url = new URL(process.env.TEST_DATABASE_URL!);
    url.pathname = '/stash_no_such_database';
    expect(isDatabaseUnavailable(await thrown(() => new pg.Client({ connectionString: url.toString() }).connect()))).toBe(true);
  });
});
