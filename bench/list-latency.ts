import crypto from 'node:crypto';
import path from 'node:path';
import fs from 'node:fs';
import SQLite from 'better-sqlite3';
import { login, startServer } from './server-process.ts';
import { ms, percentile, type Row } from './stats.ts';

const FILES = 1_000_000;
const SAMPLES = 40;

/** Fills the database straight through SQLite: a million rows through the API would take hours. */
function seed(dbFile: string): void {
  const db = new SQLite(dbFile);
  const owner = db.prepare("select id from users where username = 'bench'").get() as { id: string };
  const others = Array.from({ length: 99 }, (_, i) => {
    const id = crypto.randomBytes(12).toString('hex');
    db.prepare('insert into users (id, username, username_lower, password_hash, role, banned, time_created) values (?, ?, ?, ?, ?, 0, ?)').run(id, `u${i}`, `u${i}`, 'x', 'default', 0);
    return id;
  });
  const insert = db.prepare(
    'insert into files (id, actual_name, original_name, user_id, size, mime_type, width, height, time_created, storage_key, sha256) values (?, ?, ?, ?, ?, ?, null, null, ?, ?, null)',
  );
  const fill = db.transaction(() => {
    for (let i = 0; i < FILES; i++) {
      // A tenth of the rows belong to the caller: a heavy user with 100,000 files.
      const user = i % 10 === 0 ? owner.id : others[i % 99]!;
      const name = `f${i.toString(36).padStart(8, '0')}`;
      insert.run(name, `${name}.png`, `holiday-${i}.png`, user, 1000 + (i % 50_000), 'image/png', 1_700_000_000 + i, name);
    }
  });
  fill();
  db.close();
}

async function timed(url: string, body: unknown): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < SAMPLES; i++) {
    const t0 = performance.now();
    const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    await res.arrayBuffer();
    if (!res.ok) throw new Error(`${url}: ${res.status}`);
    out.push(performance.now() - t0);
  }
  return out;
}

/** Design §10: file-list latency with 1,000,000 files, against the bare query on the same database. */
export async function listLatency(): Promise<Row[]> {
  const first = await startServer();
  await first.stop();
  const dbFile = path.join(first.dataDir, 'stash.db');
  seed(dbFile);
  const server = await startServer({}, first.dataDir);
  const token = await login(server.apiUrl);
  const own = `${server.apiUrl}/api/v1/files/uploaded`;
  const admin = `${server.apiUrl}/api/v1/admin/get/uploaded`;
  const cases: [string, string, unknown][] = [
    ['own files, page 1, newest (100k owned)', own, { token, page: 1, pageSize: 6, sort: 'newest' }],
    ['own files, page 1, largest', own, { token, page: 1, pageSize: 6, sort: 'largest' }],
    ['own files, name filter', own, { token, page: 1, pageSize: 6, filters: { name: 'holiday-12345' } }],
    ['all files (admin), page 1, newest', admin, { token, page: 1, pageSize: 6, sort: 'newest' }],
  ];
  const rows: Row[] = [];
  // Floor: the same page straight from SQLite in this process, no HTTP, no count.
  const db = new SQLite(dbFile, { readonly: true });
  const floorStmt = db.prepare('select * from files order by time_created desc limit 6');
  const floor: number[] = [];
  for (let i = 0; i < SAMPLES; i++) {
    const t0 = performance.now();
    floorStmt.all();
    floor.push(performance.now() - t0);
  }
  db.close();
  for (const [label, url, body] of cases) {
    const samples = await timed(url, body);
    rows.push({
      benchmark: `list latency, ${label}, 1M files`,
      stash: `p50 ${ms(percentile(samples, 50))}, p95 ${ms(percentile(samples, 95))}`,
      baselineName: 'bare SQLite page query',
      baseline: `p50 ${ms(percentile(floor, 50))}`,
    });
  }
  await server.stop();
  fs.rmSync(first.dataDir, { recursive: true, force: true });
  return rows;
}
