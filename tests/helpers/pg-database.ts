import crypto from 'node:crypto';
import pg from 'pg';

/**
 * A fresh PostgreSQL database on TEST_DATABASE_URL's server, for tests whose processes open the
 * database by URL (a schema per test is not enough there); `drop` removes it.
 */
export async function createTestDatabase(prefix: string): Promise<{ url: string; drop(): Promise<void> }> {
  const base = process.env.TEST_DATABASE_URL;
  if (!base) throw new Error('TEST_DATABASE_URL is not set');
  const name = `${prefix}_${crypto.randomBytes(4).toString('hex')}`;
  const run = async (text: string) => {
    const c = new pg.Client({ connectionString: base });
    await c.connect();
    try {
      await c.query(text);
    } finally {
      await c.end();
    }
  };
  await run(`create database ${name}`);
  const url = new URL(base);
  url.pathname = `/${name}`;
  return { url: url.toString(), drop: () => run(`drop database if exists ${name} with (force)`) };
}
