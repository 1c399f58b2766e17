import fs from 'node:fs';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import { Kysely, Migrator, PostgresDialect, SqliteDialect, sql, type RawBuilder } from 'kysely';
import type { DB } from './schema.ts';
import { migrations } from './migrations/index.ts';
import { reusingStatements } from './sqlite-statements.ts';
import { readableOffThread, stopReadingOffThread } from './sqlite-off-thread.ts';
import { pacedWrites } from './sqlite-write-pace.ts';
import { primeConnections } from './warm-connections.ts';
import { survivingPool } from './pg-pool.ts';

export type Dialect = 'sqlite' | 'postgres';
export type Database = Kysely<DB>;

export interface DbHandle {
  db: Database;
  dialect: Dialect;
  /** Opens the connections kept warm and primes their catalog caches (PostgreSQL; db/warm-connections.ts). */
  prime(): Promise<void>;
  close(): Promise<void>;
}

export interface OpenOptions {
  /** PostgreSQL only: run every connection inside this schema (tests get one schema each). */
  searchPath?: string;
  poolSize?: number;
  /** PostgreSQL only: how long a query waits for a connection before it fails (503), 10 s unless set. */
  connectTimeoutMs?: number;
  /** PostgreSQL only: told when the server ends a connection (the pool drops it and opens another when needed). */
  onConnectionLost?: (err: Error) => void;
}

/**
 * PostgreSQL connections kept open while idle. node-postgres closes an idle one after 10 s, so
 * on a quiet site nearly every request opened a connection again: a list took 10.6 ms instead
 * of 4.6 ms after 11 s of quiet, on loopback with trust auth (2026-12-01, bench/README.md);
 * across a network with TLS and password auth a new connection costs more.
 */
const WARM_CONNECTIONS = 2;

/**
 * Quiet time after which a PostgreSQL connection sends a TCP keepalive. The warm connections
 * above sit idle for as long as the site is quiet, and a NAT, firewall or cloud load balancer
 * between the server and its database forgets an idle flow (AWS's after 350 s, Azure's after
 * 4 min) without telling either end: the next query on it would then be retransmitted for
 * ~15 minutes (tcp_retries2) before failing, holding its request. A probe every 30 s of quiet
 * keeps the flow known, and a database host that went away is found while the connection is
 * idle (after the kernel's unanswered probes) rather than by a request.
 */
const KEEPALIVE_AFTER_MS = 30_000;

export function openDatabase(url: string, options: OpenOptions = {}): DbHandle {
  if (url.startsWith('sqlite:')) {
    const file = url.replace(/^sqlite:(\/\/)?/, '');
    if (file !== ':memory:') fs.mkdirSync(path.dirname(file), { recursive: true });
    const database = new SQLite(file);
    // WAL lets readers run while one writer writes; busy_timeout queues writers instead of failing.
    database.pragma('journal_mode = WAL');
    database.pragma('synchronous = NORMAL');
    database.pragma('foreign_keys = ON');
    database.pragma('busy_timeout = 5000');
    const db = new Kysely<DB>({ dialect: new SqliteDialect({ database: reusingStatements(database) }) });
    // Reads of many rows go to a thread of their own (sqlite-off-thread.ts); long runs of write
    // batches wait for its WAL to reach the disk between two (sqlite-write-pace.ts).
    if (file !== ':memory:') {
      readableOffThread(db, file);
      pacedWrites(db, file);
    }
    const close = async () => {
      await stopReadingOffThread(db);
      await db.destroy();
    };
    // One connection whose statements are kept (sqlite-statements.ts): nothing to prime.
    return { db, dialect: 'sqlite', prime: async () => {}, close };
  }
  // Issue 9, a lean process: node-postgres loads only when a PostgreSQL URL is used (Kysely
  // takes the pool from a function and calls it at the first query), so SQLite installs never
  // carry it in memory.
  const pool = async () => {
    const { default: pg } = await import('pg');
    const max = options.poolSize ?? 10;
    const pool = new pg.Pool({
      connectionString: url,
      max,
      min: Math.min(WARM_CONNECTIONS, max),
      // Without it a query waits as long as the kernel keeps trying to connect (minutes for a
      // database host that stopped answering), and every request behind it with it; this way
      // they are answered 503 and the load balancer's health check sees it (README "Deployment").
      connectionTimeoutMillis: options.connectTimeoutMs ?? 10_000,
      keepAlive: true,
      keepAliveInitialDelayMillis: KEEPALIVE_AFTER_MS,
      ...(options.searchPath ? { options: `-c search_path=${options.searchPath}` } : {}),
      // node-postgres returns int8 as a string; our int8 columns hold seconds and byte counts,
      // which fit in a double exactly (design §9: times are JSON numbers on both databases).
      types: {
        getTypeParser: (oid: number, format?: 'text' | 'binary') =>
          oid === 20 ? (v: string) => Number(v) : pg.types.getTypeParser(oid, format ?? 'text'),
      },
    });
    return survivingPool(pool, (err) => options.onConnectionLost?.(err));
  };
  const db = new Kysely<DB>({ dialect: new PostgresDialect({ pool }) });
  const warm = Math.min(WARM_CONNECTIONS, options.poolSize ?? 10);
  return { db, dialect: 'postgres', prime: () => primeConnections(db, warm), close: () => db.destroy() };
}

/**
 * `schema`: the PostgreSQL schema the connection's search_path names. Kysely's migrator looks
 * for its bookkeeping tables in every schema unless told which one, so a second schema in the
 * same database (parallel test runs) would make it skip creating its own.
 */
export async function migrate(db: Database, schema?: string): Promise<void> {
  const migrator = new Migrator({ db, provider: { getMigrations: async () => migrations }, ...(schema ? { migrationTableSchema: schema } : {}) });
  const { error, results } = await migrator.migrateToLatest();
  const failed = results?.find((r) => r.status === 'Error');
  if (error || failed) {
    throw new Error(`Migration ${failed?.migrationName ?? ''} failed: ${String(error)}`);
  }
}

/**
 * `column` contains `value`, without regard to case (design §9 filters), on both dialects. Both
 * sides go through the database's lower(): JavaScript's toLowerCase folds otherwise (a final Σ to
 * ς, İ to two characters, every letter where SQLite folds ASCII only), so a name typed exactly as
 * it is stored was not found.
 */
export function containsInsensitive(column: RawBuilder<unknown> | ReturnType<typeof sql.ref>, value: string) {
  const escaped = value.replace(/[\\%_]/g, (c) => `\\${c}`);
  return sql<boolean>`lower(${column}) like lower(${`%${escaped}%`}) escape '\\'`;
}
