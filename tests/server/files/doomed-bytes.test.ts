import { Readable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { newId, nowSeconds } from '../../../server/lib/ids.ts';
import { leasedReclaim, startBackgroundJobs } from '../../../server/jobs.ts';
import { doomedKeys } from '../../../server/modules/files/doomed-bytes.ts';
import { newActualName } from '../../../server/modules/files/file-kind.ts';
import { deleteUser } from '../../../server/modules/users/users.repository.ts';
import { previewKeys } from '../../../server/modules/media/previews.ts';
import { DIALECTS, createTestApp, type TestApp, type TestUser } from '../../helpers/test-app.ts';

/** Bytes of deleted rows are deleted even when the store refuses at first or the process dies in between (files/doomed-bytes.ts). */
describe.each(DIALECTS)('doomed bytes on %s', (dialect) => {
  let t: TestApp;
  afterEach(async () => t?.close());

  const PREVIEWS = JSON.stringify([{ width: 320, height: 240, bytes: 4, suffix: 'p320' }]);

  /** A listed file whose object (and one preview's) the store holds. */
  async function storedFile(owner: TestUser, key: string, previews: string | null = null) {
    await t.deps.storage.writeAt(key, 0, Readable.from([Buffer.from('hello')]));
    await t.deps.storage.finalize(key, 5);
    for (const preview of previewKeys(key, previews)) {
      await t.deps.storage.writeAt(preview, 0, Readable.from([Buffer.from('webp')]));
      await t.deps.storage.finalize(preview, 4);
    }
    const actualName = newActualName('txt');
    await t.deps.db
      .insertInto('files')
      .values({ id: newId(), actual_name: actualName, original_name: 'a.txt', user_id: owner.id, size: 5, mime_type: 'text/plain', width: null, height: null, time_created: nowSeconds(), storage_key: key, sha256: null, previews })
      .execute();
    return actualName;
  }
  const held = async (key: string) => (await t.deps.storage.stat(key)) !== null;

  /** The store refuses to delete `key` until `allow()` is called. */
  function refuse(key: string) {
    const real = t.deps.storage.delete.bind(t.deps.storage);
    let refusing = true;
    t.deps.storage.delete = async (k) => {
      if (refusing && k === key) throw new Error('the store is unreachable');
      await real(k);
    };
    return { allow: () => (refusing = false) };
  }

  it('deletes a removed account’s objects; one the store refuses stays listed until a later pass deletes it', async () => {
    t = await createTestApp(dialect);
    const u = await t.createUser();
    await storedFile(u, 'doomed-a', PREVIEWS);
    await storedFile(u, 'doomed-b');
    await t.deps.storage.writeAt('doom-upload', 0, Readable.from([Buffer.from('part')]));
    expect(await t.deps.storage.storedBytes('doom-upload', 0, 4)).toBe(4);
    const now = nowSeconds();
    await t.deps.db
      .insertInto('uploads')
      .values({ id: newId(), user_id: u.id, original_name: 'c.bin', total_chunks: 2, file_size: null, storage_key: 'doom-upload', created_at: now, updated_at: now, expires_at: now + 86_400 })
      .execute();
    const store = refuse('doomed-b');

    expect((await t.call('/api/v1/admin/set/remove', { userId: u.id }, { token: t.admin.token })).status).toBe(200);
    expect(await held('doomed-a')).toBe(false);
    for (const preview of previewKeys('doomed-a', PREVIEWS)) expect(await held(preview)).toBe(false);
    expect(await t.deps.storage.storedBytes('doom-upload', 0, 4)).toBe(0);
    // Refused: still in the store, and still listed, not forgotten.
    expect(await held('doomed-b')).toBe(true);
    expect(await doomedKeys(t.deps.db)).toBe(1);

    store.allow();
    expect(await leasedReclaim(t.deps)).toMatchObject({ reclaimed: 1, failed: 0 });
    expect(await held('doomed-b')).toBe(false);
    expect(await doomedKeys(t.deps.db)).toBe(0);
  });

  it('lists the bytes in the transaction that deletes the rows, so the next start deletes what a crash left', async () => {
    t = await createTestApp(dialect);
    const u = await t.createUser();
    await storedFile(u, 'crashed-a', PREVIEWS);
    await storedFile(u, 'crashed-b');
    // The process dies right after the rows are gone: nothing after deleteUser runs.
    await deleteUser(t.deps.db, t.deps.dialect, u.id);
    expect(await held('crashed-a')).toBe(true);
    expect(await doomedKeys(t.deps.db)).toBe(2);

    // The next start's background jobs run a pass at once.
    const stop = startBackgroundJobs(t.deps);
    try {
      for (let i = 0; i < 200 && (await doomedKeys(t.deps.db)) > 0; i++) await new Promise((r) => setTimeout(r, 25));
    } finally {
      await stop();
    }
    expect(await doomedKeys(t.deps.db)).toBe(0);
    for (const key of ['crashed-a', 'crashed-b', ...previewKeys('crashed-a', PREVIEWS)]) expect(await held(key)).toBe(false);
  });

  it('deletes a file whose bytes the store refuses: gone from its owner’s list and from the files host at once, its bytes at the next pass', async () => {
    t = await createTestApp(dialect);
    const u = await t.createUser();
    const name = await storedFile(u, 'refused-file', PREVIEWS);
    const store = refuse('refused-file');

    const res = await t.call('/api/v1/files/delete', { filePath: name }, { token: u.token });
    expect(res.body).toEqual({ success: true, message: 'File deleted.' });
    expect((await t.call<{ totalImages: number }>('/api/v1/files/uploaded', {}, { token: u.token })).body.totalImages).toBe(0);
    expect(await held('refused-file')).toBe(true);
    // Its row is gone, so the files host does not find it, though its bytes are still there.
    expect((await t.files.inject({ method: 'GET', url: `/${name}` })).statusCode).toBe(404);
    // The preview's object was not refused: it went at once.
    for (const preview of previewKeys('refused-file', PREVIEWS)) expect(await held(preview)).toBe(false);
    expect(await doomedKeys(t.deps.db)).toBe(1);

    store.allow();
    expect(await leasedReclaim(t.deps)).toMatchObject({ reclaimed: 1, failed: 0 });
    expect(await held('refused-file')).toBe(false);
    expect((await t.files.inject({ method: 'GET', url: `/${name}` })).statusCode).toBe(404);
  });

  it('removes a large account without waiting for all its objects, never more than 8 deletes in flight', async () => {
    // The answer's own time limit (users/account-removals.ts) kept out of it: on a slow store
    // (the S3 test server) 1,000 deletes take longer than 10 s.
    t = await createTestApp(dialect, {}, { accountRemovals: { answerWithinMs: 120_000 } });
    const u = await t.createUser();
    // 1,001 files (1,000 are deleted before the answer); only the first has an object, the
    // others' deletes find nothing, which the store allows.
    await storedFile(u, 'big-0000');
    const rows = Array.from({ length: 1_000 }, (_, i) => ({
      id: newId(), actual_name: `big${String(i).padStart(7, '0')}.bin`, original_name: 'x.bin', user_id: u.id, size: 1, mime_type: 'application/octet-stream',
      width: null, height: null, time_created: nowSeconds(), storage_key: `big-${String(i + 1).padStart(4, '0')}`, sha256: null,
    }));
    await t.deps.db.insertInto('files').values(rows).execute();
    const real = t.deps.storage.delete.bind(t.deps.storage);
    let inFlight = 0;
    let most = 0;
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    t.deps.storage.delete = async (key) => {
      most = Math.max(most, ++inFlight);
      try {
        // The last key in key order is left to the background: held until the answer is in.
        if (key === 'big-1000') await gate;
        await real(key);
      } finally {
        inFlight -= 1;
      }
    };

    const res = await t.call('/api/v1/admin/set/remove', { userId: u.id }, { token: t.admin.token });
    expect(res.status).toBe(200);
    expect(await held('big-0000')).toBe(false);
    expect(await doomedKeys(t.deps.db)).toBe(1);
    release();
    for (let i = 0; i < 200 && (await doomedKeys(t.deps.db)) > 0; i++) await new Promise((r) => setTimeout(r, 25));
    expect(await doomedKeys(t.deps.db)).toBe(0);
    expect(most).toBeLessThanOrEqual(8);
    expect(most).toBeGreaterThan(1);
  });
});
