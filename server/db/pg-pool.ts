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

/** What a connection sends to show it is still there before a statement that cannot be asked again. */
const CHECK = 'select 1';

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
 *   connection was lost, is asked again on another connection.
 * - A statement that cannot be asked again (a write) is never sent twice. Instead, once any
 *   connection has been lost, every connection not heard from since is stale: before such a
 *   statement is its first, it sends `select 1`, which can be asked again. Without it a chunk's
 *   `insert … on conflict` after its auth read had used up one ended connection met the next and
 *   was answered 503 (issue 9's stop-50 note). It costs one round trip per connection after a
 *   loss, nothing before. A write on a connection lost before anyone knew still fails (503).
 */
export function survivingPool(pool: pg.Pool, onConnectionLost: (err: Error) => void): PostgresPool {
  const health = new ConnectionHealth();
  const lost = (err: Error) => {
    health.lost();
    onConnectionLost(err);
  };
  // For an idle connection the pool emits it too (and drops the connection); an 'error' nobody
  // listens to ends the process.
  pool.on('error', lost);
  pool.on('connect', (client) => {
    health.heardFrom(client, health.epoch);
    client.on('error', lost);
  });
  return {
    connect: async () => new AskingAgainClient(pool, await pool.connect(), health),
    end: () => pool.end(),
  };
}

/**
 * Which connections are known to be alive since the last one was lost: `epoch` counts losses,
 * and each connection keeps the epoch at which it last answered.
 */
class ConnectionHealth {
  epoch = 0;
  #answeredAt = new WeakMap<pg.PoolClient, number>();

  lost(): void {
    this.epoch++;
  }

  heardFrom(client: pg.PoolClient, epoch: number): void {
    this.#answeredAt.set(client, epoch);
  }

  /** Not heard from since a connection was lost: it may be gone too, its end still on its way. */
  isStale(client: pg.PoolClient): boolean {
    return (this.#answeredAt.get(client) ?? -1) < this.epoch;
  }
}

/** One checkout of a connection, as Kysely holds it from acquiring to releasing. */
class AskingAgainClient implements PostgresPoolClient {
  #pool: pg.Pool;
  #client: pg.PoolClient | null;
  #health: ConnectionHealth;
  #sent = false;

  constructor(pool: pg.Pool, client: pg.PoolClient, health: ConnectionHealth) {
    this.#pool = pool;
    this.#client = client;
    this.#health = health;
  }

  query<R>(sql: string, parameters: ReadonlyArray<unknown>): Promise<PostgresQueryResult<R>>;
  query<R>(cursor: PostgresCursor<R>): PostgresCursor<R>;
  query<R>(sqlOrCursor: string | PostgresCursor<R>, parameters?: ReadonlyArray<unknown>): Promise<PostgresQueryResult<R>> | PostgresCursor<R> {
    const first = !this.#sent;
    this.#sent = true;
    if (typeof sqlOrCursor !== 'string') return this.client().query(sqlOrCursor as unknown as pg.Submittable) as unknown as PostgresCursor<R>;
    // Kysely hands each call a copy of its parameters, and pg maps them to a new array: no copy here.
    const values = (parameters ?? []) as unknown[];
    if (!first) return this.ask<R>(sqlOrCursor, values);
    if (SAFE_TO_ASK_AGAIN.test(sqlOrCursor)) return this.askUntilAnswered<R>(sqlOrCursor, values);
    if (!this.#health.isStale(this.client())) return this.ask<R>(sqlOrCursor, values);
    return this.askUntilAnswered(CHECK, []).then(() => this.ask<R>(sqlOrCursor, values));
  }

  release(): void {
    // Null when the connection was lost and a new one could not be had: nothing to hand back.
    this.#client?.release();
    this.#client = null;
  }

  private async ask<R>(text: string, values: unknown[]): Promise<PostgresQueryResult<R>> {
    const client = this.client();
    const epoch = this.#health.epoch;
    const result = (await client.query(text, values)) as unknown as PostgresQueryResult<R>;
    this.#health.heardFrom(client, epoch);
    return result;
  }

  /**
   * Asks a statement that is safe to ask again until a connection answers it. It is asked again
   * after the first failure (nobody may have known of a loss yet) and after any failure on a
   * stale connection; each failed connection is dropped, so this ends when the stale ones are
   * gone, and a new connection that fails is an outage (503). The pool never holds more than
   * `max` connections: one more attempt than that is a bound that is never met in practice but
   * keeps a database that flaps as fast as it is asked from holding a request forever.
   */
  private async askUntilAnswered<R>(text: string, values: unknown[]): Promise<PostgresQueryResult<R>> {
    const attempts = (this.#pool.options.max ?? 10) + 1;
    for (let attempt = 1; ; attempt++) {
      const stale = this.#health.isStale(this.client());
      try {
        return await this.ask<R>(text, values);
      } catch (err) {
        if (!isDatabaseUnavailable(err) || (attempt > 1 && !stale) || attempt === attempts) throw err;
        this.#health.lost();
        // Handed back with its error, the pool closes it instead of keeping it idle.
        this.client().release(err as Error);
        this.#client = null;
        this.#client = await this.#pool.connect();
      }
    }
  }

  private client(): pg.PoolClient {
    if (!this.#client) throw new Error('This PostgreSQL connection was already handed back to the pool.');
    return this.#client;
  }
}
