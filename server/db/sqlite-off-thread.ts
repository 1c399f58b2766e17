import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import type { CompiledQuery } from 'kysely';
import type { Database } from './index.ts';

/**
 * Issue 9, lists at a million files on SQLite. better-sqlite3 runs each statement on the thread
 * that asks, and the process has one: counting the matches of a name filter no index narrows
 * ("png" in 40 % of a million names, a scan of the table) held the event loop 0.2–0.3 s, and
 * every other request of the process — uploads, downloads, other people's lists — waited as long.
 * Such reads go to a worker thread with a read-only connection of its own on the same file. WAL
 * (db/index.ts) lets it read while the main connection writes; a statement sees what was
 * committed when it started, later than anything the caller read before sending it, which is
 * all the callers need (a name filter's count reads the list's counter in the same statement).
 * Only reads go there: writes stay on the main connection, in their order.
 */

/** Rows a read must pass before it is worth a thread hop (~0.1 ms): about 5 ms of scanning. */
export const OFF_THREAD_ROWS = 20_000;

/**
 * The file read through a memory map rather than copied page by page into SQLite's cache: a scan
 * of a million files' rows 137–147 ms against 180–205 ms on the main connection, which reads
 * (2026-12-02, the "png" count). Pages it touches count in the process's RSS while mapped; they
 * are the page cache's own, which the kernel takes back under pressure.
 */
const MAP_BYTES = 1024 * 1024 * 1024;

// Plain CommonJS run with `eval`, so the same code runs from the sources and from the compiled
// bundle; the driver's path comes from the main thread, which resolved it already.
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const SQLite = require(workerData.driver);
const db = new SQLite(workerData.file, { readonly: true, fileMustExist: true });
db.pragma('busy_timeout = 5000');
db.pragma('mmap_size = ${MAP_BYTES}');
const kept = new Map();
parentPort.on('message', ({ id, sql, parameters }) => {
  try {
    let statement = kept.get(sql);
    if (!statement) {
      statement = db.prepare(sql);
      if (kept.size < 32) kept.set(sql, statement);
    }
    parentPort.postMessage({ id, rows: statement.all(...parameters) });
  } catch (err) {
    parentPort.postMessage({ id, error: String((err && err.message) || err) });
  }
});
`;

type Reply = { id: number; rows: unknown[] } | { id: number; error: string };

interface Pending {
  resolve(rows: unknown[]): void;
  reject(err: Error): void;
}

class Reader {
  private readonly worker: Worker;
  private readonly pending = new Map<number, Pending>();
  private next = 0;
  dead = false;

  constructor(file: string) {
    const driver = createRequire(import.meta.url).resolve('better-sqlite3');
    this.worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { file, driver } });
    // Referenced only while a read runs: an idle reader must not keep a finished process alive.
    this.worker.unref();
    this.worker.on('message', (m: Reply) => {
      const waiting = this.pending.get(m.id);
      if (!waiting) return;
      this.pending.delete(m.id);
      if (this.pending.size === 0) this.worker.unref();
      if ('error' in m) waiting.reject(new Error(m.error));
      else waiting.resolve(m.rows);
    });
    const fail = (err: Error) => {
      this.dead = true;
      const waiting = [...this.pending.values()];
      this.pending.clear();
      for (const w of waiting) w.reject(err);
    };
    this.worker.on('error', fail);
    this.worker.on('exit', (code) => fail(new Error(`the SQLite reading thread exited (${code})`)));
  }

  read(query: CompiledQuery): Promise<unknown[]> {
    const id = this.next++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      if (this.pending.size === 1) this.worker.ref();
      this.worker.postMessage({ id, sql: query.sql, parameters: query.parameters });
    });
  }

  stop(): Promise<number> {
    return this.worker.terminate();
  }
}

const files = new WeakMap<Database, string>();
const readers = new WeakMap<Database, Reader>();
let readsOffThread = 0;

/** Called by openDatabase for a SQLite file (an in-memory database has nothing to share). */
export function readableOffThread(db: Database, file: string): void {
  files.set(db, file);
}

/** Ends the reading thread of `db`, if it started one (its handle's close). */
export async function stopReadingOffThread(db: Database): Promise<void> {
  const reader = readers.get(db);
  readers.delete(db);
  await reader?.stop();
}

/** Whether `db` has started its reading thread (tests). */
export function readingThreadStarted(db: Database): boolean {
  return readers.has(db);
}

/** How many reads went to a reading thread in this process (tests: which way a read went). */
export function offThreadReads(): number {
  return readsOffThread;
}

/**
 * Starts the reading thread of `db` now (a SQLite file's; nothing otherwise) rather than at its
 * first large read, whose request would wait for the start.
 */
export function startReadingOffThread(db: Database): void {
  const file = files.get(db);
  if (file !== undefined && !readers.has(db)) readers.set(db, new Reader(file));
}

interface Runnable<T> {
  compile(): CompiledQuery;
  execute(): Promise<T[]>;
}

/**
 * The rows of `query`, read on the reading thread when `rows` (what it must pass) is worth it
 * and `db` is a SQLite file; else, or when the thread cannot read, on the main connection as
 * any statement is. A statement the database refuses is refused the same way on either.
 */
export async function readBig<T>(db: Database, query: Runnable<T>, rows: number): Promise<T[]> {
  const file = files.get(db);
  if (file === undefined || rows < OFF_THREAD_ROWS) return query.execute();
  startReadingOffThread(db);
  const reader = readers.get(db)!;
  // A thread that died is not started again: its reads stay on the main connection.
  if (reader.dead) return query.execute();
  try {
    const result = (await reader.read(query.compile())) as T[];
    readsOffThread++;
    return result;
  } catch {
    // The thread's own failure (or the statement's, which the main connection then reports).
    return query.execute();
  }
}
