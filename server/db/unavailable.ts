/**
 * Whether a database error says the database cannot be reached or used right now — PostgreSQL
 * restarting or failing over, a connection it ended, a network that dropped, too many
 * connections, a database that is gone; SQLite locked past `busy_timeout` — rather than that a
 * statement was wrong. Such a request is answered 503 with Retry-After (error-handler.ts): the
 * client did nothing wrong, and the same request works once the database is back.
 */
export function isDatabaseUnavailable(err: unknown): boolean {
  for (let e = err, depth = 0; e && typeof e === 'object' && depth < 3; e = (e as { cause?: unknown }).cause, depth++) {
    const { code, message } = e as { code?: unknown; message?: unknown };
    if (typeof code === 'string' && (UNAVAILABLE_SQLSTATE.test(code) || SOCKET_CODES.has(code) || code.startsWith('SQLITE_BUSY'))) return true;
    // node-postgres's own words when the connection is gone: its errors carry no code.
    if (typeof message === 'string' && PG_CONNECTION_LOST.test(message)) return true;
  }
  return false;
}

/**
 * SQLSTATE: class 08 (connection exception), 57P01–57P03 (admin or crash shutdown, cannot
 * connect now), 53300 (too many connections), 3D000 (the database does not exist).
 */
const UNAVAILABLE_SQLSTATE = /^(08[0-9A-Z]{3}|57P0[123]|53300|3D000)$/;

const SOCKET_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN', 'EPIPE']);

const PG_CONNECTION_LOST = /^(Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|Client was closed and is not queryable)/;
