import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { sql } from 'kysely';
import type { TestApp } from '../../helpers/test-app.ts';

/** Every row of every table, so a test can show that a refused call changed nothing. */
const TABLES = ['roles', 'users', 'sessions', 'api_keys', 'invites', 'settings', 'mime_types', 'files', 'uploads', 'upload_chunks'] as const;

/**
 * The same as `snapshot` for equality, in one round trip, cheap enough to take after every fuzz
 * case: every row of every table as text, aggregated in the database.
 */
export async function fingerprint(t: TestApp): Promise<string> {
  const union = t.deps.dialect === 'sqlite' ? await sqliteRowsAsText(t) : TABLES.map((table) => `select '${table}:' || x::text as r from ${table} x`).join(' union all ');
  const agg = t.deps.dialect === 'sqlite' ? 'group_concat(r, char(10))' : 'md5(string_agg(r, chr(10)))';
  const row = await sql<{ h: string | null }>`select ${sql.raw(agg)} as h from (select r from (${sql.raw(union)}) u order by r) s`.execute(t.deps.db);
  return row.rows[0]?.h ?? '';
}

const sqliteUnions = new WeakMap<TestApp, string>();

/** SQLite has no row-to-text: each table's columns, quoted and joined, read once per app. */
async function sqliteRowsAsText(t: TestApp): Promise<string> {
  const cached = sqliteUnions.get(t);
  if (cached) return cached;
  const parts: string[] = [];
  for (const table of TABLES) {
    const cols = await sql<{ name: string }>`select name from pragma_table_info(${table})`.execute(t.deps.db);
    parts.push(`select '${table}:' || ${cols.rows.map((c) => `quote("${c.name}")`).join(" || ',' || ")} as r from ${table}`);
  }
  const union = parts.join(' union all ');
  sqliteUnions.set(t, union);
  return union;
}

export async function snapshot(t: TestApp): Promise<string> {
  const tables = TABLES;
  // Read in parallel: on PostgreSQL each table is a round trip, and the fuzz suite takes
  // one snapshot per refused case.
  const rows = await Promise.all(tables.map((table) => t.deps.db.selectFrom(table).selectAll().execute()));
  const out: Record<string, unknown[]> = {};
  tables.forEach((table, i) => {
    out[table] = rows[i]!.map((r) => JSON.stringify(r)).sort();
  });
  return JSON.stringify(out);
}

/**
 * A stand-in for the captcha provider's siteverify endpoint, on real HTTP at 127.0.0.1: it
 * accepts the answer `good` for the expected secret and refuses everything else.
 */
export async function startCaptchaProvider(secret: string): Promise<{ url: string; requests: URLSearchParams[]; close(): Promise<void> }> {
  const requests: URLSearchParams[] = [];
  const server = http.createServer((req, res) => {
    let raw = '';
    req.on('data', (c: Buffer) => (raw += c.toString()));
    req.on('end', () => {
      const form = new URLSearchParams(raw);
      requests.push(form);
      const success = form.get('secret') === secret && form.get('response') === 'good';
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ success }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/siteverify`,
    requests,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
