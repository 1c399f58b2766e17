import { execFile } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { migrate, openDatabase } from '../../server/db/index.ts';

/**
 * A migrated schema, once per test run, copied for every PostgreSQL test app. Kysely's migrator
 * reads the catalog of the whole database at each run, even with nothing to do: migrating a fresh
 * schema took ~250 ms (~130 of them that read) of a test app's ~520 ms (with two users and its
 * close, a quiet two-core machine), and replaying the migrated schema's dump takes ~50 ms. The
 * migrations themselves still run here, and in every test that starts a server process.
 */

/**
 * Kysely's migrator reads the catalog of every schema in the database, and PostgreSQL fails that
 * read ("schema … does not exist") when another test drops its schema at the same moment. Test
 * files (and two `vitest` runs) share the database, so migrations hold this advisory lock shared
 * and drops take it alone.
 */
export const SCHEMA_DDL_LOCK = 0x57a54;

/** Stands for the schema's name in the saved dump. */
const PLACEHOLDER = '__stash_test_schema__';
/** Where global-setup.ts tells the test files the dump is. */
const ENV = 'STASH_TEST_PG_SCHEMA_SQL';

/** Creates `schema` and brings it to the latest migration with the real migrator, as a server's start does. */
export async function migrateSchema(client: pg.Client, url: string, schema: string): Promise<void> {
  await client.query(`create schema ${schema}`);
  await client.query('select pg_advisory_lock_shared($1)', [SCHEMA_DDL_LOCK]);
  const handle = openDatabase(url, { searchPath: schema, poolSize: 1 });
  try {
    await migrate(handle.db, schema);
  } finally {
    await handle.close();
    await client.query('select pg_advisory_unlock_shared($1)', [SCHEMA_DDL_LOCK]);
  }
}

/**
 * Migrates a scratch schema with the real migrator, saves its dump (the tables, triggers and the
 * migrator's own rows, so a copy counts as migrated) and sets the variable the test files read.
 */
export async function saveMigratedSchema(url: string): Promise<void> {
  const schema = `tpl_${crypto.randomBytes(6).toString('hex')}`;
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await migrateSchema(client, url, schema);
    // PostgreSQL's client tools, as tests/server/scale/backup-postgres.test.ts needs them too.
    const { stdout: dump } = await promisify(execFile)('pg_dump', ['--no-owner', '--no-privileges', '--inserts', '--schema', schema, url], { maxBuffer: 16 * 1024 * 1024 });
    // psql's meta-commands (pg_dump's `\restrict` guard) are not SQL; the rest runs as one query.
    const sql = dump.split('\n').filter((line) => !line.startsWith('\\')).join('\n').replaceAll(schema, PLACEHOLDER);
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'stash-pg-schema-')), 'schema.sql');
    fs.writeFileSync(file, sql);
    process.env[ENV] = file;
  } finally {
    await client.query('select pg_advisory_lock($1)', [SCHEMA_DDL_LOCK]);
    await client.query(`drop schema if exists ${schema} cascade`);
    await client.end();
  }
}

/** Removes the saved dump (global-setup.ts's teardown). */
export function forgetMigratedSchema(): void {
  const file = process.env[ENV];
  if (file) fs.rmSync(path.dirname(file), { recursive: true, force: true });
}

let saved: string | null | undefined;

/** One connection per test process for creating and dropping schemas: a new one costs a backend's start and cold caches (~60 ms a test). */
let ddl: Promise<pg.Client> | null = null;

function ddlClient(url: string): Promise<pg.Client> {
  ddl ??= (async () => {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    client.on('error', () => {
      ddl = null; // the server ended it; the next schema opens another
    });
    return client;
  })();
  return ddl;
}

/**
 * Creates `schema` as a copy of the migrated one; false when no copy was saved (a test process
 * started without global-setup.ts: the caller creates and migrates it then). The copy reads no
 * other schema, so it needs no lock.
 */
export async function copyMigratedSchema(url: string, schema: string): Promise<boolean> {
  if (saved === undefined) {
    const file = process.env[ENV];
    saved = file ? fs.readFileSync(file, 'utf8') : null;
  }
  if (saved === null) return false;
  await (await ddlClient(url)).query(saved.replaceAll(PLACEHOLDER, schema));
  return true;
}

/**
 * Creates `schema` at the latest migration: a copy of the saved one, or, in a test process
 * started without global-setup.ts, migrated in place under the shared lock. That migration holds
 * the lock on a connection of its own: on the shared one, a drop sent meanwhile by another test
 * app of this process would be granted the exclusive lock by its own session and not wait.
 */
export async function createTestSchema(url: string, schema: string): Promise<void> {
  if (await copyMigratedSchema(url, schema)) return;
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await migrateSchema(client, url, schema);
  } finally {
    await client.end();
  }
}

/** Drops a test's schema, once no migrator elsewhere in the database is reading the catalog. */
export async function dropTestSchema(url: string, schema: string): Promise<void> {
  // One query of two statements runs as one transaction: the lock is let go as it ends, and a
  // failed drop rolls it back without leaving the shared connection in an aborted transaction.
  await (await ddlClient(url)).query(`select pg_advisory_xact_lock(${SCHEMA_DDL_LOCK}); drop schema ${schema} cascade`);
}
