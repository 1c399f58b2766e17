import pg from 'pg';

/** The PostgreSQL the benchmarks may use (BENCH_DATABASE_URL, else the tests' one), or null. */
export const benchPostgresUrl = (): string | null => process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL ?? null;

/**
 * Runs `use` on a database of its own, created for it on the server of `adminUrl` and dropped
 * after, whatever `use` does: a benchmark's million rows never land in the tests' database.
 */
export async function withScratchDatabase<T>(adminUrl: string, tag: string, use: (url: string) => Promise<T>): Promise<T> {
  const dbName = `stash_bench_${tag}_${process.pid}`;
  // The maintenance database, not the test one: test runs may end every session on theirs.
  const maintenance = new URL(adminUrl);
  maintenance.pathname = '/postgres';
  const c = new pg.Client({ connectionString: maintenance.toString() });
  c.on('error', () => {});
  await c.connect();
  await c.query(`create database ${dbName}`);
  const url = new URL(adminUrl);
  url.pathname = `/${dbName}`;
  try {
    return await use(url.toString());
  } finally {
    await c.query(`drop database if exists ${dbName} with (force)`);
    await c.end();
  }
}

/** One client on `url` for `use`, closed after. */
export async function withClient<T>(url: string, use: (c: pg.Client) => Promise<T>): Promise<T> {
  const c = new pg.Client({ connectionString: url });
  c.on('error', () => {});
  await c.connect();
  try {
    return await use(c);
  } finally {
    await c.end();
  }
}

/**
 * Runs `insert`, one statement adding many files, with the per-row counting trigger stopped, then
 * sets the counts it would have kept. The trigger fires once per row: a statement of a million
 * rows would rewrite the site's count row a million times, each a new row version, where the app
 * inserts one file per transaction.
 */
export async function insertFilesCounted(c: pg.Client, insert: string, params: unknown[]): Promise<void> {
  await c.query('alter table files disable trigger files_count_insert');
  try {
    await c.query(insert, params);
  } finally {
    await c.query('alter table files enable trigger files_count_insert');
  }
  await c.query(`insert into file_counts (user_id, file_count) select user_id, count(*) from files group by user_id
                 on conflict (user_id) do update set file_count = excluded.file_count`);
  await c.query('update file_totals set file_count = (select count(*) from files) where id = 1');
}
