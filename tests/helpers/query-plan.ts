import { PostgresAdapter, sql } from 'kysely';
import type { Database } from '../../server/db/index.ts';

interface Compilable {
  compile(): { sql: string; parameters: readonly unknown[] };
}

/**
 * The plan the database makes for `query`, as text: SQLite's `explain query plan` details, or
 * PostgreSQL's EXPLAIN with the planner's `enable_<name>` settings in `off` turned off for it —
 * a test's few rows make any plan cheap, so forbidding the other ways shows which index serves.
 */
export async function queryPlan(db: Database, query: Compilable, off: readonly string[] = []): Promise<string> {
  const { sql: text, parameters } = query.compile();
  if (!(db.getExecutor().adapter instanceof PostgresAdapter)) {
    const res = await sql.raw<{ detail: string }>(`explain query plan ${inlined(text, parameters)}`).execute(db);
    return res.rows.map((r) => r.detail).join('\n');
  }
  return db.connection().execute(async (c) => {
    for (const name of off) await sql.raw(`set enable_${name} = off`).execute(c);
    const res = await sql.raw<{ 'QUERY PLAN': string }>(`explain ${inlined(text, parameters)}`).execute(c);
    for (const name of off) await sql.raw(`reset enable_${name}`).execute(c);
    return res.rows.map((r) => r['QUERY PLAN']).join('\n');
  });
}

/** EXPLAIN needs literal values: the parameters here are test strings and numbers only. */
function inlined(text: string, parameters: readonly unknown[]): string {
  const literal = (v: unknown) => (typeof v === 'number' ? String(v) : `'${String(v).replace(/'/g, "''")}'`);
  let i = 0;
  return text.replace(/\?|\$\d+/g, (m) => literal(parameters[m === '?' ? i++ : Number(m.slice(1)) - 1]));
}
