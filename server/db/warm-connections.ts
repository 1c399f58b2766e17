import { sql } from 'kysely';
import type { Database } from './index.ts';

/**
 * Runs `work` on `count` distinct connections of the pool at once: each holds its connection
 * until all have one, so the pool opens as many as asked instead of handing one back each time.
 */
export async function onEachConnection<T>(db: Database, count: number, work: (conn: Database) => Promise<T>): Promise<T[]> {
  let arrived = 0;
  let allHeld = () => {};
  const held = new Promise<void>((resolve) => (allHeld = resolve));
  const runs = Array.from({ length: count }, () =>
    db.connection().execute(async (conn) => {
      if (++arrived === count) allHeld();
      await held;
      return work(conn);
    }),
  );
  // A connection the pool cannot open (the server's connection limit) lets the others go on.
  for (const run of runs) run.catch(() => allHeld());
  return Promise.all(runs);
}

/**
 * Opens `count` PostgreSQL connections and has each plan a statement on every table of its
 * schema before the server takes requests. A new backend builds its catalog caches (a table,
 * each of its indexes, their operators) as statements first touch a table: a fresh process's
 * first statements took 3–15 ms each to plan instead of 0.1–0.9 ms, and a fresh process is what
 * a deploy, a restart or one more node behind a load balancer answers with (bench/README, "Deep
 * pages"). EXPLAIN plans without reading a row: a few milliseconds per table, once. The pool
 * keeps these connections open (`min`), so they stay primed.
 *
 * Only a shortcut: a failure here is left for the first request to meet as it would have.
 */
export async function primeConnections(db: Database, count: number): Promise<void> {
  await onEachConnection(db, count, async (conn) => {
    const { rows } = await sql<{ schema: string; name: string }>`
      select schemaname as schema, tablename as name from pg_tables where schemaname = current_schema() order by tablename`.execute(conn);
    for (const table of rows) await sql`explain select * from ${sql.table(`${table.schema}.${table.name}`)}`.execute(conn);
  }).catch(() => {});
}
