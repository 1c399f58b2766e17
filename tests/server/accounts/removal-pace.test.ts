import fsp from 'node:fs/promises';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { DIALECTS, createTestApp, type TestApp } from '../../helpers/test-app.ts';
import { letDiskCatchUp } from '../../../server/db/sqlite-write-pace.ts';
import { deleteUser } from '../../../server/modules/users/users.repository.ts';

/** A promise and its resolve (Node 20 has no Promise.withResolvers). */
function gate(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

/**
 * An account's removal deletes its files a batch per transaction and, between two, lets the disk
 * catch up (server/db/sqlite-write-pace.ts): on SQLite its writes had kept the disk's queue full,
 * and every other upload's sync waited behind them for seconds (bench/README.md, "Removing a
 * large account on SQLite"). What that buys is timed in `npm run bench -- removal`; these hold
 * the removal to waiting for it, and the wait to syncing what SQLite wrote.
 */
describe.each(DIALECTS)('an account removal paced between its batches on %s', (dialect) => {
  let t: TestApp;
  afterEach(async () => {
    vi.restoreAllMocks();
    await t?.close();
  });

  async function seedFiles(userId: string, n: number) {
    for (let start = 0; start < n; start += 300) {
      const rows = Array.from({ length: Math.min(300, n - start) }, (_, k) => {
        const i = start + k;
        return { id: `pace-${i}`, actual_name: `pace${String(i).padStart(6, '0')}.bin`, original_name: `IMG_${i}.jpg`, user_id: userId, size: 1000 + i, mime_type: 'image/jpeg', time_created: 1_700_000_000 + i, storage_key: `pacekey${String(i).padStart(6, '0')}`, sha256: null, previews: '[]' };
      });
      await t.deps.db.insertInto('files').values(rows).execute();
    }
  }
  const filesOf = async (userId: string) => Number((await t.deps.db.selectFrom('files').select((eb) => eb.fn.countAll().as('n')).where('user_id', '=', userId).executeTakeFirstOrThrow()).n);

  it('deletes a batch, waits for the pause to end before the next, and removes the account at the end', async () => {
    t = await createTestApp(dialect);
    const u = await t.createUser();
    const other = await t.createUser();
    await seedFiles(u.id, 1_200);
    await t.deps.db.updateTable('files').set({ user_id: other.id }).where('id', '=', 'pace-0').execute();

    const seen: number[] = [];
    let paused = gate();
    let release = gate();
    const removal = deleteUser(t.deps.db, t.deps.dialect, u.id, async () => {
      seen.push(await filesOf(u.id));
      paused.resolve();
      await release.promise;
    });

    await paused.promise;
    // Held: no further batch runs while the pause lasts.
    expect(await filesOf(u.id)).toBe(699);
    paused = gate();
    const first = release;
    release = gate();
    first.resolve();
    await paused.promise;
    expect(await filesOf(u.id)).toBe(199);
    release.resolve();
    await removal;

    // 1,199 files: two full batches each followed by a pause; the last, short one ends the loop.
    expect(seen).toEqual([699, 199]);
    expect(await filesOf(u.id)).toBe(0);
    expect(await t.deps.db.selectFrom('users').select('id').where('id', '=', u.id).execute()).toEqual([]);
    expect(await filesOf(other.id)).toBe(1);
  });

  it(dialect === 'sqlite' ? 'syncs the WAL SQLite wrote to before going on' : 'has nothing to sync: the database is another process', async () => {
    t = await createTestApp(dialect);
    const u = await t.createUser();
    await seedFiles(u.id, 10);
    const opened: string[] = [];
    const open = fsp.open;
    let synced = 0;
    vi.spyOn(fsp, 'open').mockImplementation(async (...args: Parameters<typeof fsp.open>) => {
      const handle = await open(...args);
      opened.push(String(args[0]));
      const datasync = handle.datasync.bind(handle);
      handle.datasync = async () => {
        synced += 1;
        return datasync();
      };
      return handle;
    });
    await letDiskCatchUp(t.deps.db);
    if (dialect === 'sqlite') {
      expect(opened).toEqual([`${t.dataDir}/stash.db-wal`]);
      expect(synced).toBe(1);
    } else {
      expect(opened).toEqual([]);
    }
  });
});
