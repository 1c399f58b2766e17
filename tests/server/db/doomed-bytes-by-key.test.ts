import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Migrator, sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { openDatabase, type Database } from '../../../server/db/index.ts';
import { migrations } from '../../../server/db/migrations/index.ts';
import { reclaimDoomedBytes } from '../../../server/modules/files/doomed-bytes.ts';
import { createTestApp, type TestApp } from '../../helpers/test-app.ts';

/**
 * SQLite keeps the doomed keys in key order, the order the reclaim deletes them in (migration
 * 2026-12-04-20): in a table kept in the order the keys were doomed, every batch of a reclaim
 * rewrote pages all over the table — 503 MiB written to reclaim the 90,000 keys of a removed
 * account, which the disk of every upload beside it had to absorb.
 */
describe('doomed keys on SQLite', () => {
  let t: TestApp | undefined;
  let dir: string | undefined;
  afterEach(async () => {
    await t?.close();
    t = undefined;
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
    dir = undefined;
  });

  /** Keys as the store makes them: random, so doomed in an order unrelated to their own. */
  const keyOf = (i: number) => crypto.createHash('sha256').update(`doomed ${i}`).digest('hex').slice(0, 32);

  /** Dooms keys 0 … n − 1, 500 a statement, as an account's removal dooms a batch of its files (users.repository.ts). */
  async function doom(db: Database, n: number) {
    for (let start = 0; start < n; start += 500) {
      const rows = Array.from({ length: Math.min(500, n - start) }, (_, k) => ({
        storage_key: keyOf(start + k),
        previews: '[]',
        kind: 'file' as const,
        doomed_at: 1_700_000_000 + start + k,
      }));
      await db.insertInto('doomed_bytes').values(rows).execute();
    }
  }
  const doomedRows = (db: Database) => db.selectFrom('doomed_bytes').selectAll().orderBy('storage_key').execute();

  it('an upgrade keeps every key doomed before it (and a downgrade too)', async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'stash-doomed-'));
    const handle = openDatabase(`sqlite://${path.join(dir, 'stash.db')}`);
    try {
      const migrator = new Migrator({ db: handle.db, provider: { getMigrations: async () => migrations } });
      expect((await migrator.migrateTo('2026-12-04-10-file-deletes-per-statement')).error).toBeUndefined();
      await doom(handle.db, 1_200);
      await handle.db.insertInto('doomed_bytes').values({ storage_key: 'an-upload', previews: null, kind: 'upload', doomed_at: 1_700_000_000 }).execute();
      const before = await doomedRows(handle.db);
      expect(before).toHaveLength(1_201);

      expect((await migrator.migrateToLatest()).error).toBeUndefined();
      expect(await doomedRows(handle.db)).toEqual(before);
      // A key doomed twice is still one row (files/doomed-bytes.ts inserts "on conflict").
      await expect(handle.db.insertInto('doomed_bytes').values({ ...before[0]! }).execute()).rejects.toThrow(/UNIQUE/);

      expect((await migrator.migrateDown()).error).toBeUndefined();
      expect(await doomedRows(handle.db)).toEqual(before);
    } finally {
      await handle.close();
    }
  });

  it('a reclaim deletes each batch of keys from a few pages, not from all over the table', async () => {
    t = await createTestApp('sqlite');
    const db = t.deps.db;
    const KEYS = 3_000;
    await doom(db, KEYS);
    // Every page the reclaim changes is appended to the WAL at each commit: count them from an empty WAL.
    await sql`pragma wal_autocheckpoint = 0`.execute(db);
    expect((await sql<{ busy: number }>`pragma wal_checkpoint(truncate)`.execute(db)).rows[0]).toMatchObject({ busy: 0, log: 0 });

    // None of the keys has an object: the store's delete of a missing object succeeds (storage.ts).
    const pass = await reclaimDoomedBytes(t.deps);
    expect(pass).toMatchObject({ reclaimed: KEYS, failed: 0 });
    expect(await doomedRows(db)).toEqual([]);
    const written = Number((await sql<{ log: number }>`pragma wal_checkpoint(passive)`.execute(db)).rows[0]!.log);

    // 15 batches of 200 keys, from a table of ~40 pages. Kept in the order the keys were doomed,
    // with an index by key beside it, each batch rewrote most of the table's pages: 554 pages
    // written in all. In key order a batch's rows share a few pages: 107.
    expect(written).toBeLessThan(15 * 15);
  });
});
