import type { PostgresCursor, PostgresPool, PostgresPoolClient, PostgresQueryResult } from 'kysely';
import type pg from 'pg';
import { isDatabaseUnavailable } from './unavailable.ts';

/**
 * Statements that change nothing, so asking them again on another connection cannot do twice
 * what was meant once: reads, and the start of a transaction (nothing has happened in it yet).
 * A `with … insert` starts with `with`, and `explain analyze` runs what it explains: neither is
 * asked again.
 */
const SAFE_TO_ASK_AGAIN = /^\s*(select|begin|start transaction)\b/i;

/**
 * The pool Kysely draws PostgreSQL connections from, made to survive PostgreSQL ending them
 * (a restart, a failover, pg_terminate_backend, idle_session_timeout, a dropped network).
 *
 * - A connection ended while a request holds it (inside a transaction, between statements)
 *   emits 'error' on its client, and node-postgres's pool listens only while the client is
 *   idle: with nobody listening, that event ended the whole process, and every upload it was
 *   serving. Every client now has a listener for its whole life; its next statement fails as
 *   unavailable (503, error-handler.ts) and the pool drops it when it is handed back.
 * - PostgreSQL ends every connection at once, but each one's end reaches the server on its own
 *   socket, milliseconds apart on a loaded machine: a request could take an idle connection whose
 *   end was on its way and get a 503 though the database was up. The first statement a request
 *   sends on a connection, when it is safe to ask again (SAFE_TO_ASK_AGAIN) and failed because the
 *   connection was lost, is asked once more on a new connection. Anything else still fails: a write
 *   may have run, and a statement inside a transaction lost the rest of it.
 */
export function survivingPool(pool: pg.Pool, onConnectionLost: (err: Error) => void): PostgresPool {
  // For an idle connection the pool emits it too (and drops the connection); an 'error' nobody
  // listens to ends the process.
  pool.on('error', onConnectionLost);
  pool.on('connect', (client) => client.on('error', onConnectionLost));
  return {
    connect: async () => new AskingAgainClient(pool, await pool.connect()),
    end: () => pool.end(),
  };
}

/** One checkout of a connection, as Kysely holds it from acquiring to releasing. */
class AskingAgainClient implements PostgresPoolClient {
  #pool: pg.Pool;
  #client: pg.PoolClient | null;
  #sent = false;

  constructor(pool: pg.Pool, client: pg.PoolClient) {
    this.#pool = pool;
    this.#client = client;
  }

  query<R>(sql: string, parameters: ReadonlyArray<unknown>): Promise<PostgresQueryResult<R>>;
  query<R>(cursor: PostgresCursor<R>): PostgresCursor<R>;
  query<R>(sqlOrCursor: string | PostgresCursor<R>, parameters?: ReadonlyArray<unknown>): Promise<PostgresQueryResult<R>> | PostgresCursor<R> {
    const first = !this.#sent;
    this.#sent = true;
    if (typeof sqlOrCursor !== 'string') return this.client().query(sqlOrCursor as unknown as pg.Submittable) as unknown as PostgresCursor<R>;
    const ask = () => this.client().query(sqlOrCursor, [...(parameters ?? [])]) as unknown as Promise<PostgresQueryResult<R>>;
    if (!first || !SAFE_TO_ASK_AGAIN.test(sqlOrCursor)) return ask();
    return ask().catch(async (err: unknown) => {
      if (!isDatabaseUnavailable(err)) throw err;
      // Handed back with its error, the pool closes it instead of keeping it idle.
      this.client().release(err as Error);
      this.#client = null;
      this.#client = await this.#pool.connect();
      return ask();
    });
  }

  release(): void {
    // Null when the connection was lost and a new one could not be had: nothing to hand back.
    this.#client?.release();
    this.#client = null;
  }

  private client(): pg.PoolClient {
    if (!this.#client) throw new Error('This PostgreSQL connection was already handed back to the pool.');
    return this.#client;
  }
}
