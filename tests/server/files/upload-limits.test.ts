import crypto from 'node:crypto';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { DIALECTS, type TestUser } from '../../helpers/test-app.ts';
import { until } from '../../helpers/poll.ts';
import { createHttpTestApp, postJson, randomBytes, sendMultipart, type HttpTestApp } from '../../helpers/upload.ts';
import type { Caller } from '../../../server/modules/auth/caller.repository.ts';
import { wholeFileBounds } from '../../../server/modules/files/upload-bounds.ts';
import { createUploadWithin } from '../../../server/modules/files/uploads.repository.ts';

const CHUNK = 256 * 1024;
const MB = 1_048_576;

describe.each(DIALECTS)('per-user upload bounds on %s (issue 8 item 4, design §6)', (dialect) => {
  let t: HttpTestApp;
  let user: TestUser;
  afterEach(async () => t?.close());

  const send = (fields: Record<string, string | number>, data: Buffer, token = user.token) =>
    sendMultipart(`${t.apiUrl}/api/v1/files/upload`, { fields: { token, ...fields }, file: { data, filename: 'blob' } });
  const admin = (route: string, body: Record<string, unknown>, token = t.admin.token) => postJson(`${t.apiUrl}/api/v1/admin/${route}`, { token, ...body });
  // Bytes of unfinished uploads in the store (local partial/ or S3 pieces): a refusal writes none.
  const partialBytes = () => t.store.partialBytes();
  const chunk0 = (name: string, totalChunks = 2) => send({ uploadId: crypto.randomUUID(), originalname: name, totalChunks, chunkIndex: 0 }, randomBytes(CHUNK));
  /** Whole files whose bodies stop after their first `heldAfter` bytes until `release()`. */
  const heldWholeFiles = (files: Buffer[], heldAfter = 100 * 1024) => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const answers = Promise.all(
      files.map((data, i) =>
        sendMultipart(`${t.apiUrl}/api/v1/files/upload`, {
          fields: { token: user.token, originalname: `part-${i}.bin` },
          file: {
            data: async function* () {
              yield data.subarray(0, heldAfter);
              await held;
              yield data.subarray(heldAfter);
            },
          },
        }),
      ),
    );
    return { answers, release };
  };
  const openUploads = (n: number) =>
    until(
      () => t.deps.db.selectFrom('uploads').select('id').execute(),
      (rows) => rows.length === n,
    );

  it('has the documented defaults, lets only an admin change them, and refuses bad values', async () => {
    t = await createHttpTestApp(dialect, { chunkSize: CHUNK });
    user = await t.createUser();
    const got = await admin('get/limits', {});
    expect(got.body).toEqual({
      success: true,
      limits: { max_unfinished_uploads: 20, max_unfinished_size: 2048, max_url_fetches: 3, storage_quota: { default: null, trusted: null, mod: null, admin: null } },
    });
    expect((await admin('set/limit', { setting: 'max_url_fetches', value: 5 }, user.token)).status).toBe(403);
    expect((await admin('set/limit', { setting: 'max_url_fetches', value: 0 })).status).toBe(400);
    expect((await admin('set/limit', { setting: 'max_files', value: 5 })).status).toBe(400);
    expect((await admin('set/storagequota', { roleName: 'nobody', quotaMb: 5 })).status).toBe(400);
    expect((await admin('set/limit', { setting: 'max_url_fetches', value: 5 })).status).toBe(200);
    expect((await admin('set/storagequota', { roleName: 'trusted', quotaMb: 100 })).status).toBe(200);
    expect((await t.deps.settings.limits()).max_url_fetches).toBe(5);
    const after = await admin('get/limits', {});
    expect(after.body.limits).toMatchObject({ max_url_fetches: 5, storage_quota: { trusted: 100, default: null } });
  });

  it('refuses a new upload past max unfinished uploads before writing a byte, and allows one once another is cancelled', async () => {
    t = await createHttpTestApp(dialect, { chunkSize: CHUNK });
    user = await t.createUser();
    expect((await admin('set/limit', { setting: 'max_unfinished_uploads', value: 2 })).status).toBe(200);
    const first = crypto.randomUUID();
    expect((await send({ uploadId: first, originalname: 'a.bin', totalChunks: 2, chunkIndex: 0 }, randomBytes(CHUNK))).status).toBe(200);
    expect((await chunk0('b.bin')).status).toBe(200);
    const before = await partialBytes();

    const third = await chunk0('c.bin');
    expect(third.status).toBe(429);
    expect(String(third.body.error)).toContain('You have 2 unfinished uploads, the most this site allows (max unfinished uploads)');
    expect(await partialBytes()).toBe(before);
    // Another user is not affected.
    const other = await t.createUser();
    expect((await send({ uploadId: crypto.randomUUID(), originalname: 'x.bin', totalChunks: 2, chunkIndex: 0 }, randomBytes(CHUNK), other.token)).status).toBe(200);

    expect((await postJson(`${t.apiUrl}/api/v1/files/upload/cancel`, { token: user.token, uploadId: first })).status).toBe(200);
    expect((await chunk0('c.bin')).status).toBe(200);
  });

  it('opens no more than max unfinished uploads when many start at once', async () => {
    t = await createHttpTestApp(dialect, { chunkSize: CHUNK });
    user = await t.createUser();
    expect((await admin('set/limit', { setting: 'max_unfinished_uploads', value: 2 })).status).toBe(200);
    // Each was counted before any was inserted, so a burst all saw room (3 of 8 opened on one
    // process, 7 of 8 times with a limit of 1): the count and the insert are now one transaction.
    const answers = await Promise.all(['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'].map((n) => chunk0(`${n}.bin`)));
    expect(answers.map((a) => a.status).sort()).toEqual([200, 200, 429, 429, 429, 429, 429, 429]);
    expect(await t.deps.db.selectFrom('uploads').select('id').where('user_id', '=', user.id).execute()).toHaveLength(2);
  });

  it('opens no upload for a request refused before it could start one (a resume of bytes never sent)', async () => {
    t = await createHttpTestApp(dialect, { chunkSize: CHUNK });
    user = await t.createUser();
    expect((await admin('set/limit', { setting: 'max_unfinished_uploads', value: 2 })).status).toBe(200);
    for (let i = 0; i < 3; i++) {
      const refused = await send({ uploadId: crypto.randomUUID(), originalname: `r${i}.bin`, totalChunks: 2, chunkIndex: 0, chunkOffset: 500 }, randomBytes(CHUNK - 500));
      expect(refused.status).toBe(409);
      expect(String(refused.body.error)).toContain('resume from chunkOffset 0');
    }
    // Each refusal used to leave an upload behind, and after 20 of them the account could start
    // none for 24 hours.
    expect(await t.deps.db.selectFrom('uploads').select('id').where('user_id', '=', user.id).execute()).toHaveLength(0);
    expect((await chunk0('fine.bin')).status).toBe(200);
  });

  it('takes a lone chunked file as large as max unfinished upload size: its last chunk counts as the rest, not a whole chunk', async () => {
    const chunkSize = 300_000; // not a divisor of 1 MB, so the last chunk is short
    t = await createHttpTestApp(dialect, { chunkSize });
    user = await t.createUser();
    expect((await admin('set/maxfilesize', { value: 1 })).status).toBe(200);
    expect((await admin('set/limit', { setting: 'max_unfinished_size', value: 1 })).status).toBe(200);
    const data = randomBytes(MB);
    const uploadId = crypto.randomUUID();
    const totalChunks = Math.ceil(MB / chunkSize);
    let last: Awaited<ReturnType<typeof send>> | undefined;
    for (let i = 0; i < totalChunks; i++) {
      last = await send({ uploadId, originalname: 'exact.bin', totalChunks, chunkIndex: i, fileSize: MB }, data.subarray(i * chunkSize, (i + 1) * chunkSize));
      expect(last.status, JSON.stringify(last.body)).toBe(200);
    }
    expect(last!.body.url).toMatch(/^http/);
  });

  it('refuses a chunk that would take unfinished bytes past max unfinished upload size', async () => {
    t = await createHttpTestApp(dialect, { chunkSize: CHUNK });
    user = await t.createUser();
    // Max file size first: the bound may not be below it (settings/upload-sizes.ts).
    expect((await admin('set/maxfilesize', { value: 1 })).status).toBe(200);
    expect((await admin('set/limit', { setting: 'max_unfinished_size', value: 1 })).status).toBe(200);
    // 1 MB holds four chunks of 256 KiB.
    for (const name of ['a', 'b', 'c', 'd']) expect((await chunk0(`${name}.bin`)).status).toBe(200);
    const before = await partialBytes();
    const over = await chunk0('e.bin');
    expect(over.status).toBe(413);
    expect(String(over.body.error)).toContain('more than 1 MB, the most this site allows (max unfinished upload size)');
    expect(await partialBytes()).toBe(before);
  });

  it('counts a whole file that is streaming as an unfinished upload, against both bounds', async () => {
    t = await createHttpTestApp(dialect, { chunkSize: CHUNK });
    user = await t.createUser();
    expect((await admin('set/limit', { setting: 'max_unfinished_uploads', value: 1 })).status).toBe(200);
    // One body held open after its first piece: the account's one unfinished upload.
    const first = heldWholeFiles([randomBytes(300 * 1024)]);
    expect(await openUploads(1)).toHaveLength(1);
    const second = await send({ originalname: 'second.bin' }, randomBytes(1000));
    expect(second.status).toBe(429);
    expect(String(second.body.error)).toContain('You have 1 unfinished uploads, the most this site allows (max unfinished uploads)');
    first.release();
    expect((await first.answers)[0]!.status).toBe(200);
    expect((await send({ originalname: 'second.bin' }, randomBytes(1000))).status).toBe(200);

    // 1 MB of unfinished bytes: a whole file is cut off the moment it would hold more. Set in
    // the store, under a max file size of 1024 MB: admin/set/limit refuses that pair now
    // (settings/upload-sizes.ts), but an instance saved before it may hold one, and the bound holds.
    await t.deps.settings.setLimit('max_unfinished_size', 1);
    const big = await send({ originalname: 'big.bin' }, randomBytes(2 * MB));
    expect(big.status).toBe(413);
    expect(String(big.body.error)).toContain('more than 1 MB, the most this site allows (max unfinished upload size)');
    expect(await partialBytes()).toBe(0);
    expect(await t.deps.db.selectFrom('uploads').select('id').execute()).toHaveLength(0);
  });

  it('enforces a role storage quota on whole files, on chunked uploads at chunk 0, and lifts it', async () => {
    t = await createHttpTestApp(dialect, { chunkSize: CHUNK });
    user = await t.createUser();
    expect((await admin('set/storagequota', { roleName: 'default', quotaMb: 1 })).status).toBe(200);
    const whole = (size: number) => send({ originalname: 'w.bin' }, randomBytes(size));
    expect((await whole(800 * 1024)).status).toBe(200);

    const over = await whole(400 * 1024);
    expect(over.status).toBe(413);
    expect(over.body.error).toBe("This upload would exceed your storage quota of 1 MB (role 'default'); delete some files to make room.");
    // One smaller than the room a whole file is opened with (reserveAhead(0)) is refused as well.
    const small = await whole(250 * 1024);
    expect(small.status).toBe(413);
    expect(small.body.error).toBe(over.body.error);
    expect(await partialBytes()).toBe(0);
    // Refused before a byte is written when the size is known up front.
    const declared = await send({ uploadId: crypto.randomUUID(), originalname: 'big.bin', totalChunks: 2, chunkIndex: 0, fileSize: 2 * CHUNK }, randomBytes(CHUNK));
    expect(declared.status).toBe(413);
    expect(await t.deps.db.selectFrom('uploads').select('id').execute()).toHaveLength(0);
    // Other roles keep their own (unlimited) quota.
    const trusted = await t.createUser({ role: 'trusted' });
    expect((await send({ originalname: 'w.bin' }, randomBytes(2 * MB), trusted.token)).status).toBe(200);

    expect((await admin('set/storagequota', { roleName: 'default', quotaMb: 0 })).status).toBe(400);
    expect((await admin('delete/storagequota', { roleName: 'default' })).status).toBe(200);
    expect((await whole(400 * 1024)).status).toBe(200);
  });

  it('reserves little room ahead of a streaming whole file, so another that fits is taken', async () => {
    t = await createHttpTestApp(dialect, { chunkSize: CHUNK });
    user = await t.createUser();
    expect((await admin('set/maxfilesize', { value: 3 })).status).toBe(200);
    expect((await admin('set/limit', { setting: 'max_unfinished_size', value: 3 })).status).toBe(200);
    // A body the server has read 1,565,529 bytes of (where its parser's pieces happened to end),
    // still open. Reserving as much again ahead took 3,131,058 of the 3 MB, and a 300,000-byte
    // file (1.9 MB together) was refused.
    const now = Math.floor(Date.now() / 1000);
    const caller: Caller = { id: user.id, username: user.username, role: 'default', banned: false, via: 'session', sessionId: null };
    const row = { id: `held-${now}`, user_id: user.id, original_name: 'held.bin', total_chunks: 1, file_size: null, storage_key: 'heldwholefile0000000', created_at: now, updated_at: now, expires_at: now + 3600 };
    const upload = await createUploadWithin(t.deps.db, t.deps.dialect, row, 20);
    const bounds = wholeFileBounds(t.deps, caller, upload!);
    expect(await bounds(1_565_529)).toBeNull();
    const reserved = await t.deps.db.selectFrom('upload_chunks').select('bytes').where('upload_id', '=', row.id).executeTakeFirstOrThrow();
    expect(Number(reserved.bytes)).toBeLessThanOrEqual(1_565_529 * 1.25);
    expect((await send({ originalname: 'fits.bin' }, randomBytes(300_000))).status).toBe(200);
  });

  it('answers 503, not "interrupted", when the database fails while a streaming whole file reserves room, and keeps nothing', async () => {
    t = await createHttpTestApp(dialect, { chunkSize: CHUNK });
    user = await t.createUser();
    const body = heldWholeFiles([randomBytes(2 * MB)]);
    // Its first room is reserved; the next piece past it needs another reservation.
    await until(
      () => t.deps.db.selectFrom('upload_chunks').select('bytes').execute(),
      (rows) => rows.length === 1 && Number(rows[0]!.bytes) > 0,
    );
    const outage = Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' });
    const limits = vi.spyOn(t.deps.settings, 'limits').mockRejectedValue(outage);
    body.release();
    const [answer] = await body.answers;
    limits.mockRestore();
    // The client did nothing wrong: it was told the upload was interrupted (400) and not to retry.
    expect(answer!.status).toBe(503);
    expect(answer!.body).toEqual({ success: false, error: 'The database is unavailable right now. Please try again in a moment.' });
    expect(await t.deps.db.selectFrom('uploads').select('id').execute()).toHaveLength(0);
    expect(await partialBytes()).toBe(0);
    expect((await send({ originalname: 'after.bin' }, randomBytes(1000))).status).toBe(200);
  });

  it("counts a whole file's bytes while it streams in every other upload's bound, not only its own", async () => {
    t = await createHttpTestApp(dialect, { chunkSize: CHUNK });
    user = await t.createUser();
    expect((await admin('set/maxfilesize', { value: 3 })).status).toBe(200);
    expect((await admin('set/limit', { setting: 'max_unfinished_size', value: 3 })).status).toBe(200);
    // 2,000,000 bytes of the first body are in and it is still open...
    const first = heldWholeFiles([randomBytes(2_100_000)], 2_000_000);
    await until(
      () => t.deps.db.selectFrom('upload_chunks').select('bytes').execute(),
      (rows) => rows.reduce((sum, r) => sum + Number(r.bytes), 0) >= 2_000_000,
    );
    // ...so a second of 1,500,000 would hold 3.5 MB against 3 MB. Each body used to be measured
    // against what the others had stored when it started: whole files hold none until listed,
    // so both were taken.
    const second = await send({ originalname: 'second.bin' }, randomBytes(1_500_000));
    expect(second.status).toBe(413);
    expect(String(second.body.error)).toContain('(max unfinished upload size)');
    first.release();
    expect((await first.answers).map((a) => a.status)).toEqual([200]);
    // Listed, the first holds no unfinished bytes any more: the second now fits.
    expect((await send({ originalname: 'second.bin' }, randomBytes(1_500_000))).status).toBe(200);
    expect(await t.deps.db.selectFrom('upload_chunks').select('upload_id').execute()).toHaveLength(0);
  });

  it('lets whole files sent at once fill the quota and no more: each is checked again as it is listed', async () => {
    t = await createHttpTestApp(dialect, { chunkSize: CHUNK });
    user = await t.createUser();
    expect((await admin('set/storagequota', { roleName: 'default', quotaMb: 1 })).status).toBe(200);
    // Four bodies of 900 KiB, each held after its first 100 KiB until all four have passed the
    // check made before streaming (each opened its upload row): each alone fits in 1 MB.
    const { answers, release } = heldWholeFiles([0, 1, 2, 3].map(() => randomBytes(900 * 1024)));
    expect(await openUploads(4)).toHaveLength(4);
    release();
    const results = await answers;

    expect(results.map((r) => r.status).sort()).toEqual([200, 413, 413, 413]);
    for (const refused of results.filter((r) => r.status === 413)) {
      expect(refused.body.error).toBe("This upload would exceed your storage quota of 1 MB (role 'default'); delete some files to make room.");
    }
    const stats = await postJson(`${t.apiUrl}/api/v1/utils/userstats`, { token: user.token });
    expect(stats.body).toMatchObject({ stats: { totalFilesUploaded: 1, totalStorageUsed: 900 * 1024 } });
    // The refused bytes are gone: one stored object, nothing unfinished.
    expect(await t.store.storedKeys()).toHaveLength(1);
    expect(await t.store.partialBytes()).toBe(0);
  });
});
