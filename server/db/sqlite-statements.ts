import type SQLite from 'better-sqlite3';
import type { SqliteDatabase } from 'kysely';

/**
 * SQL texts whose compiled statements are kept. The server's queries are a few hundred texts
 * (Kysely compiles a query to the same text each time; values are parameters); a list of ids
 * `in (?, ?, …)` makes one text per length, which the bound keeps from growing without end.
 */
export const KEPT_STATEMENTS = 500;

/**
 * better-sqlite3's database as Kysely's SQLite driver sees it, preparing each SQL text once
 * (issue 9, "reuse prepared statements"): Kysely calls `prepare` for every query it runs, and
 * compiling the SQL had been 13 % of the files host's time per request and most of a fuzzed
 * request's. SQLite recompiles a kept statement by itself when the schema changes
 * (sqlite3_prepare_v2), so a migration run after a statement was kept is seen.
 */
export function reusingStatements(database: SQLite.Database, max = KEPT_STATEMENTS): SqliteDatabase {
  const kept = new Map<string, SQLite.Statement>();
  return {
    close: () => {
      kept.clear();
      database.close();
    },
    prepare(sql) {
      const found = kept.get(sql);
      // Busy: still being iterated (a stream not yet finished); a statement runs one query at a time.
      if (found && !found.busy) {
        // Map order is insertion order: taken out and put back, it is the most recently used.
        kept.delete(sql);
        kept.set(sql, found);
        return found;
      }
      const statement = database.prepare(sql);
      if (!found) {
        kept.set(sql, statement);
        if (kept.size > max) kept.delete(kept.keys().next().value as string);
      }
      return statement;
    },
  };
}
