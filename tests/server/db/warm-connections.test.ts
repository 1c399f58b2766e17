import { sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { openDatabase, type Database, type DbHandle } from '../../../server/db/index.ts';
import { onEachConnection } from '../../../server/db/warm-connections.ts';
import { createTestApp, type TestApp } from '../../helpers/test-app.ts';

/**
 * The indexes each of two distinct pooled connections has opened. Without priming, the second
 * connection opens here, and neither has touched the tables yet.
 */
async function cachedIndexes(db: Database): Promise<string[][]> {
  const backends = await onEachConnection(db, 2, async (conn) => {
    const { rows } = await sql<{ pid: number; ident: string | null }>`
      select pg_backend_pid() as pid, ident from pg_backend_memory_contexts where name = 'index info'`.execute(conn);
    return { pid: rows[0]?.pid, cached: rows.map((r) => r.ident ?? '') };
  });
  expect(new Set(backends.map((b) => b.pid)).size).toBe(2);
  return backends.map((b) => b.cached);
}

/**
 * Issue 9, a fresh process's first requests: the connections a PostgreSQL server keeps open are
 * primed at start (server/db/warm-connections.ts), so no request pays for a new backend loading
 * its catalog caches (3–15 ms per statement). The caches are read where they live: each
 * backend's own memory contexts, one "index info" context per index it has opened.
 */
describe.skipIf(!process.env.TEST_DATABASE_URL)('a PostgreSQL server primes the connections it keeps (server/db/warm-connections.ts)', () => {
  let t: TestApp | undefined;
  let handle: DbHandle | undefined;
  afterEach(async () => {
    await handle?.close();
    await t?.close();
  });

  it('both kept connections have every index of the schema in their caches before the first request, at the first start and after a restart', async () => {
    t = await createTestApp('postgres');
    const schema = (await sql<{ s: string }>`select current_schema() as s`.execute(t.deps.db)).rows[0]!.s;
    const indexes = (await sql<{ name: string }>`select indexname as name from pg_indexes where schemaname = ${schema}`.execute(t.deps.db)).rows.map((r) => r.name);
    expect(indexes).toEqual(expect.arrayContaining(['files_user_size_desc_id', 'file_list_anchors_pkey']));

    // The server's own pool, primed by createDeps at start; then a process started on the
    // existing database, as after a deploy or a restart, with nothing run on it but the priming.
    expect(await cachedIndexes(t.deps.db)).toEqual([indexes, indexes].map((i) => expect.arrayContaining(i)));
    handle = openDatabase(t.deps.config.databaseUrl, { searchPath: schema, poolSize: 5 });
    await handle.prime();
    expect(await cachedIndexes(handle.db)).toEqual([indexes, indexes].map((i) => expect.arrayContaining(i)));
  });
});
