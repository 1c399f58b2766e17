import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import type pg from 'pg';
import { options } from './options.ts';
import { benchPostgresUrl, insertFilesCounted, withClient, withScratchDatabase } from './scratch-postgres.ts';
import { login, startServer, type BenchServer } from './server-process.ts';
import { median, min, ms, percentile, type Row } from './stats.ts';
import { uploadFile } from './upload-client.ts';

/**
 * An admin removes an account of FILES files (Admin → Users → delete), on SQLite and PostgreSQL:
 * how long until the admin's answer, until the account's rows are gone (after the answer when
 * there are many: users/account-removals.ts) and until its bytes are off the disk; beside it,
 * what the removal costs everyone else (an upload while it runs). Anchors from the same run: the
 * same number of rows deleted straight in the database, a batch per statement as the server
 * does (users.repository.ts), with no HTTP, no list of doomed bytes and no bytes to delete; and
 * the same uploads with nothing else running.
 */
const FILES = options.quick ? 10_000 : 90_000;
const ROUNDS = options.quick ? 2 : 3;
/** users.repository.ts deletes this many of an account's files per transaction. */
const BATCH = 500;
/** Uploads timed with nothing else running, per round. */
const IDLE_UPLOADS = 20;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The database beside the server, as an operator's script would reach it. */
interface Beside {
  label: string;
  addUser(id: string): Promise<void>;
  /** FILES rows owned by `userId`, counted as the triggers would; their storage keys. */
  seed(userId: string): Promise<string[]>;
  /** Deletes `userId`'s files BATCH per statement; the rows deleted. */
  deleteBatched(userId: string): Promise<number>;
  dropUser(id: string): Promise<void>;
  /** Whether the account's row is still there (the server removes it last). */
  hasUser(id: string): Promise<boolean>;
  doomedLeft(): Promise<number>;
  close(): Promise<void>;
}

/** Where the local store keeps a stored object's bytes (server/storage/local.ts). */
const bytesPath = (dataDir: string, key: string) => path.join(dataDir, 'storage', 'files', key.slice(0, 2), key);

function writeBytes(dataDir: string, keys: string[]): void {
  for (const key of keys) {
    fs.mkdirSync(path.dirname(bytesPath(dataDir, key)), { recursive: true });
    fs.writeFileSync(bytesPath(dataDir, key), 'x');
  }
}

/** Waits until the account's row is gone: its files went before it. */
async function untilRemoved(db: Beside, userId: string): Promise<void> {
  while (await db.hasUser(userId)) await sleep(50);
}

/** Waits until no doomed key is left, then checks that the removed files' bytes are gone. */
async function untilReclaimed(db: Beside, dataDir: string, keys: string[]): Promise<void> {
  while ((await db.doomedLeft()) > 0) await sleep(50);
  const left = keys.filter((key) => fs.existsSync(bytesPath(dataDir, key))).length;
  if (left > 0) throw new Error(`${db.label}: ${left} of ${keys.length} removed files' bytes are still on disk`);
}

function sqliteBeside(dataDir: string): Beside {
  const db = new SQLite(path.join(dataDir, 'stash.db'));
  // The server holds the same file: a write waits for its transaction rather than failing.
  db.pragma('busy_timeout = 60000');
  return {
    label: 'SQLite',
    async addUser(id) {
      db.prepare(`insert into users (id, username, username_lower, password_hash, role, banned, time_created)
                  select ?, ?, ?, password_hash, 'default', 0, 1700000000 from users where username = 'bench'`).run(id, id, id);
    },
    // One statement: the triggers keep the counts and the name index as the server's inserts would.
    async seed(userId) {
      db.prepare(
        `with recursive n(i) as (select 0 union all select i + 1 from n where i < ? - 1)
         insert into files (id, actual_name, original_name, user_id, size, mime_type, time_created, storage_key, sha256, previews)
         select lower(hex(randomblob(8))), lower(hex(randomblob(5))) || '.jpg', printf('IMG_%d.jpg', i), ?, abs(random()) % 10000000,
                'image/jpeg', 1700000000 + i, lower(hex(randomblob(16))), lower(hex(randomblob(32))), '[]'
         from n`,
      ).run(FILES, userId);
      return (db.prepare('select storage_key from files where user_id = ?').pluck().all(userId) as string[]);
    },
    async deleteBatched(userId) {
      const batch = db.prepare(`delete from files where rowid in (select rowid from files where user_id = ? limit ${BATCH})`);
      let total = 0;
      for (let n = BATCH; n === BATCH; total += n) n = batch.run(userId).changes;
      return total;
    },
    async dropUser(id) {
      db.prepare('delete from users where id = ?').run(id);
    },
    async hasUser(id) {
      return db.prepare('select 1 from users where id = ?').get(id) !== undefined;
    },
    async doomedLeft() {
      return (db.prepare('select count(*) as n from doomed_bytes').get() as { n: number }).n;
    },
    async close() {
      db.close();
    },
  };
}

function postgresBeside(c: pg.Client): Beside {
  return {
    label: 'PostgreSQL',
    async addUser(id) {
      await c.query(`insert into users (id, username, username_lower, password_hash, role, banned, time_created)
                     select $1, $1, $1, password_hash, 'default', 0, 1700000000 from users where username = 'bench'`, [id]);
    },
    async seed(userId) {
      await insertFilesCounted(
        c,
        `insert into files (id, actual_name, original_name, user_id, size, mime_type, time_created, storage_key, sha256, previews)
         select left(md5(random()::text), 16), left(md5(random()::text), 10) || '.jpg', 'IMG_' || i || '.jpg', $1, (random() * 10000000)::bigint,
                'image/jpeg', 1700000000 + i, md5(random()::text || i), md5(i::text) || md5(random()::text), '[]'
         from generate_series(0, $2::int - 1) as i`,
        [userId, FILES],
      );
      await c.query('analyze files');
      return (await c.query<{ storage_key: string }>('select storage_key from files where user_id = $1', [userId])).rows.map((r) => r.storage_key);
    },
    async deleteBatched(userId) {
      let total = 0;
      for (let n = BATCH; n === BATCH; total += n) {
        n = (await c.query(`delete from files where id in (select id from files where user_id = $1 limit ${BATCH})`, [userId])).rowCount ?? 0;
      }
      return total;
    },
    async dropUser(id) {
      await c.query('delete from users where id = $1', [id]);
    },
    async hasUser(id) {
      return (await c.query('select 1 from users where id = $1', [id])).rows.length > 0;
    },
    async doomedLeft() {
      return Number((await c.query<{ n: string }>('select count(*) as n from doomed_bytes')).rows[0]!.n);
    },
    async close() {},
  };
}

async function removeAccount(apiUrl: string, token: string, userId: string): Promise<void> {
  const res = await fetch(`${apiUrl}/api/v1/admin/set/remove`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ token, userId }),
  });
  if (!res.ok) throw new Error(`admin/set/remove: ${res.status} ${await res.text()}`);
}

/**
 * Before a timed request after a long pause (seeding, a reclaim): the server closes a connection
 * idle for 72 s (server/app.ts), and a request sent on it just as it closes fails (EPIPE). The
 * first request finds out, untimed; the retry opens a new connection.
 */
async function reconnect(apiUrl: string): Promise<void> {
  const once = () => fetch(`${apiUrl}/healthz`).then((res) => res.arrayBuffer());
  await once().catch(once);
}

/** 1 KiB uploads one after another, each timed, until `stop` says so (at least one). */
async function uploadsUntil(apiUrl: string, token: string, stop: (done: number) => boolean, seed: number): Promise<number[]> {
  const out: number[] = [];
  do {
    const t0 = performance.now();
    await uploadFile(apiUrl, token, 1024, seed + out.length);
    out.push(performance.now() - t0);
  } while (!stop(out.length));
  return out;
}

/** Everything the rows say about one dialect's rounds. */
interface Samples {
  answered: number[];
  /** From the request until the account's row is gone. */
  removed: number[];
  bytesGone: number[];
  straight: number[];
  beside: number[];
  /** Uploads from the account's removal until its bytes are gone. */
  besideReclaim: number[];
  idle: number[];
}

async function rounds(server: BenchServer, db: Beside): Promise<Samples> {
  const token = await login(server.apiUrl);
  const s: Samples = { answered: [], removed: [], bytesGone: [], straight: [], beside: [], besideReclaim: [], idle: [] };
  let seed = 50_000_000;
  for (let r = 0; r < ROUNDS; r++) {
    // The removal alone, then the same database work straight, then a removal with uploads beside.
    const alone = `alone${r}`;
    await db.addUser(alone);
    let keys = await db.seed(alone);
    writeBytes(server.dataDir, keys);
    spawnSync('sync');
    await reconnect(server.apiUrl);
    let t0 = performance.now();
    await removeAccount(server.apiUrl, token, alone);
    s.answered.push(performance.now() - t0);
    await untilRemoved(db, alone);
    s.removed.push(performance.now() - t0);
    await untilReclaimed(db, server.dataDir, keys);
    s.bytesGone.push(performance.now() - t0);

    const straight = `straight${r}`;
    await db.addUser(straight);
    await db.seed(straight);
    spawnSync('sync');
    t0 = performance.now();
    const deleted = await db.deleteBatched(straight);
    s.straight.push(performance.now() - t0);
    if (deleted !== FILES) throw new Error(`${db.label}: deleted ${deleted} of ${FILES} rows`);
    await db.dropUser(straight);

    const busy = `busy${r}`;
    await db.addUser(busy);
    keys = await db.seed(busy);
    writeBytes(server.dataDir, keys);
    spawnSync('sync');
    await reconnect(server.apiUrl);
    s.idle.push(...(await uploadsUntil(server.apiUrl, token, (n) => n >= IDLE_UPLOADS, seed)));
    seed += 1000;
    let done = false;
    const removal = removeAccount(server.apiUrl, token, busy)
      .then(() => untilRemoved(db, busy))
      .finally(() => (done = true));
    const beside = uploadsUntil(server.apiUrl, token, () => done, seed);
    await removal;
    s.beside.push(...(await beside));
    seed += 100_000;
    // Once the rows are gone the server deletes the account's bytes in the background: the same
    // uploads go on until it has.
    let reclaimed = false;
    const reclaim = untilReclaimed(db, server.dataDir, keys).finally(() => (reclaimed = true));
    s.besideReclaim.push(...(await uploadsUntil(server.apiUrl, token, () => reclaimed, seed)));
    seed += 100_000;
    await reclaim;
    process.stderr.write(`  ${db.label} round ${r + 1}: answered ${ms(s.answered.at(-1)!)}, removed ${ms(s.removed.at(-1)!)}, bytes gone ${ms(s.bytesGone.at(-1)!)}, straight ${ms(s.straight.at(-1)!)}\n`);
  }
  return s;
}

function rowsOf(label: string, s: Samples): Row[] {
  const files = FILES.toLocaleString('en');
  const spread = (v: number[]) => `p50 ${ms(percentile(v, 50))}, p95 ${ms(percentile(v, 95))}, max ${ms(Math.max(...v))} (${v.length} uploads)`;
  return [
    {
      benchmark: `account removal, ${label}, ${files} files: its rows gone (the admin's answer; its bytes off the disk)`,
      stash: `median ${ms(median(s.removed))}, min ${ms(min(s.removed))} (answer ${ms(median(s.answered))}; ${ms(median(s.bytesGone))})`,
      baselineName: `the same rows deleted straight in the database, ${BATCH} per statement`,
      baseline: `median ${ms(median(s.straight))}, min ${ms(min(s.straight))}`,
      ratio: `${(median(s.removed) / median(s.straight)).toFixed(2)} ×`,
    },
    {
      benchmark: `account removal, ${label}, ${files} files: a 1 KiB upload by someone else while it runs`,
      stash: spread(s.beside),
      baselineName: 'the same uploads with nothing else running',
      baseline: spread(s.idle),
      ratio: `${(percentile(s.beside, 95) / percentile(s.idle, 95)).toFixed(2)} × (p95)`,
    },
    {
      benchmark: `account removal, ${label}, ${files} files: a 1 KiB upload by someone else after its rows, while its bytes are deleted`,
      stash: spread(s.besideReclaim),
      baselineName: 'the same uploads with nothing else running',
      baseline: spread(s.idle),
      ratio: `${(percentile(s.besideReclaim, 95) / percentile(s.idle, 95)).toFixed(2)} × (p95)`,
    },
  ];
}

/** Design §9's user removal at scale, on SQLite and (where there is one) PostgreSQL. */
export async function accountRemoval(): Promise<Row[]> {
  const sqlite = await startServer();
  const out: Row[] = [];
  const db = sqliteBeside(sqlite.dataDir);
  try {
    out.push(...rowsOf('SQLite', await rounds(sqlite, db)));
  } finally {
    await db.close();
    await sqlite.stop();
    fs.rmSync(sqlite.dataDir, { recursive: true, force: true });
  }
  const adminUrl = benchPostgresUrl();
  if (!adminUrl) return [...out, { benchmark: 'account removal, PostgreSQL', stash: 'not run', baselineName: 'needs', baseline: 'TEST_DATABASE_URL' }];
  await withScratchDatabase(adminUrl, 'removal', async (url) => {
    const server = await startServer({ DATABASE_URL: url });
    try {
      out.push(...rowsOf('PostgreSQL', await withClient(url, (c) => rounds(server, postgresBeside(c)))));
    } finally {
      await server.stop();
      fs.rmSync(server.dataDir, { recursive: true, force: true });
    }
  });
  return out;
}
