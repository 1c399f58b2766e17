import crypto from 'node:crypto';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ChunkLease } from '../../../server/modules/files/upload-lease.ts';
import { until } from '../../helpers/poll.ts';
import { DIALECTS, type TestUser } from '../../helpers/test-app.ts';
import { createHttpTestApp, postJson, randomBytes, sendMultipart, sha256, type HttpTestApp } from '../../helpers/upload.ts';

const CHUNK = 1024;

/**
 * Design §7: a chunk sent twice is harmless, after the last one too. When the answer to the last
 * chunk is lost (a dropped connection, a crash right after the listing), the client asks
 * `status` and sends what is missing. The server used to forget a finished upload at once:
 * `status` said 404, the client sent the whole file again, and it was listed twice.
 */
describe.each(DIALECTS)('an upload already finished, asked about again, on %s', (dialect) => {
  let t: HttpTestApp;
  let user: TestUser;
  afterEach(async () => t?.close());

  const upload = (fields: Record<string, string | number>, data: Buffer) =>
    sendMultipart(`${t.apiUrl}/api/v1/files/upload`, { fields: { token: user.token, ...fields }, file: { data, filename: 'blob' } });
  const status = (uploadId: string) => postJson(`${t.apiUrl}/api/v1/files/upload/status`, { token: user.token, uploadId });
  const listed = async () => (await postJson(`${t.apiUrl}/api/v1/files/uploaded`, { token: user.token })).body.totalImages;
  const unfinished = async () => (await t.deps.db.selectFrom('uploads').select('id').execute()).length;

  async function finishTwoChunks(name: string) {
    const data = randomBytes(CHUNK + 300);
    const uploadId = crypto.randomUUID();
    const chunk = (i: number) => data.subarray(i * CHUNK, (i + 1) * CHUNK);
    const common = { uploadId, originalname: name, totalChunks: 2, fileSize: data.length };
    const send = (i: number) => upload({ ...common, chunkIndex: i, chunkHash: sha256(chunk(i)) }, chunk(i));
    expect((await send(0)).status).toBe(200);
    const last = await send(1);
    expect(last.status).toBe(200);
    return { uploadId, send, url: last.body.url as string };
  }

  it('answers status and every resent chunk with the file it became, and lists it once', async () => {
    t = await createHttpTestApp(dialect, { chunkSize: CHUNK });
    user = await t.createUser();
    const { uploadId, send, url } = await finishTwoChunks('clip.bin');
    expect(url).toMatch(/^http/);

    const asked = await status(uploadId);
    expect(asked.status).toBe(200);
    expect(asked.body).toMatchObject({ success: true, totalChunks: 2, received: [0, 1], partial: null, url });
    expect((asked.body.file as { original_name: string }).original_name).toBe('clip.bin');

    // A client that never asked (or an older one) sends the chunks again: each gets the link.
    for (const i of [1, 0]) {
      const again = await send(i);
      expect(again.status).toBe(200);
      expect(again.body).toMatchObject({ success: true, url });
    }
    expect(await listed()).toBe(1);
    expect(await unfinished()).toBe(0);
  });

  it('answers a last chunk sent again while the first one finishes the upload with the file, not 410', async () => {
    t = await createHttpTestApp(dialect, { chunkSize: CHUNK });
    user = await t.createUser();
    const data = randomBytes(CHUNK + 300);
    const uploadId = crypto.randomUUID();
    const chunk = (i: number) => data.subarray(i * CHUNK, (i + 1) * CHUNK);
    const send = (i: number) => upload({ uploadId, originalname: 'race.bin', totalChunks: 2, fileSize: data.length, chunkIndex: i, chunkHash: sha256(chunk(i)) }, chunk(i));
    expect((await send(0)).status).toBe(200);
    // The first request of the last chunk waits at the store's finalize, every byte in.
    const storage = t.deps.storage;
    const finalize = storage.finalize.bind(storage);
    let finalizing!: () => void;
    const reached = new Promise<void>((resolve) => (finalizing = resolve));
    let releaseFinalize!: () => void;
    const released = new Promise<void>((resolve) => (releaseFinalize = resolve));
    storage.finalize = async (key, size) => {
      finalizing();
      await released;
      return finalize(key, size);
    };
    const first = send(1);
    await reached;
    // The client gave up on it and sends the chunk again; that request has found the upload
    // unfinished and waits to take the chunk's lease until the first has listed the file.
    let firstDone!: Promise<unknown>;
    const acquire = ChunkLease.acquire.bind(ChunkLease);
    const spy = vi.spyOn(ChunkLease, 'acquire').mockImplementation(async (...args) => {
      await firstDone;
      return acquire(...args);
    });
    try {
      firstDone = first;
      const again = send(1);
      expect(await until(async () => spy.mock.calls.length, (n) => n > 0)).toBe(1);
      releaseFinalize();
      const url = (await first).body.url;
      expect(url).toMatch(/^http/);
      const answer = await again;
      expect(answer.status, JSON.stringify(answer.body)).toBe(200);
      expect(answer.body).toMatchObject({ success: true, url });
    } finally {
      spy.mockRestore();
    }
    expect(await listed()).toBe(1);
  });

  it('answers a chunk sent again with the file even when that file now fills the storage quota', async () => {
    const big = 512 * 1024;
    t = await createHttpTestApp(dialect, { chunkSize: big });
    user = await t.createUser();
    await t.deps.settings.setStorageQuota('default', 1);
    const data = randomBytes(big + 100 * 1024);
    const uploadId = crypto.randomUUID();
    const chunk = (i: number) => data.subarray(i * big, (i + 1) * big);
    const send = (i: number) => upload({ uploadId, originalname: 'fills.bin', totalChunks: 2, fileSize: data.length, chunkIndex: i }, chunk(i));
    expect((await send(0)).status).toBe(200);
    const last = await send(1);
    expect(last.status).toBe(200);
    // Its listed bytes and its declared size together are past the quota: the declared size was
    // checked before the finished upload was asked about, and a client that lost the answer was
    // told 413 for a file it has.
    const again = await send(1);
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({ success: true, url: last.body.url });
    // A new upload of that size is refused as before, before a row is made.
    const other = await upload({ uploadId: crypto.randomUUID(), originalname: 'more.bin', totalChunks: 2, fileSize: data.length, chunkIndex: 0 }, chunk(0));
    expect(other.status).toBe(413);
    expect(await unfinished()).toBe(0);
  });

  it('says 410 once the finished file was deleted, rather than taking it again', async () => {
    t = await createHttpTestApp(dialect, { chunkSize: CHUNK });
    user = await t.createUser();
    const { uploadId, send, url } = await finishTwoChunks('gone.bin');
    const name = url.split('/').pop() ?? '';
    expect((await postJson(`${t.apiUrl}/api/v1/files/delete`, { token: user.token, filePath: name })).status).toBe(200);

    expect((await status(uploadId)).status).toBe(410);
    const again = await send(0);
    expect(again.status).toBe(410);
    expect(again.body.success).toBe(false);
    expect(await listed()).toBe(0);
    expect(await unfinished()).toBe(0);
  });

  it('keeps spec-only clients (no uploadId) free to upload the same name again', async () => {
    t = await createHttpTestApp(dialect, { chunkSize: CHUNK });
    user = await t.createUser();
    for (const round of [1, 2]) {
      const data = randomBytes(500 + round);
      const res = await upload({ originalname: 'same.bin', totalChunks: 1, chunkIndex: 0 }, data);
      expect(res.status).toBe(200);
      expect(res.body.url).toMatch(/^http/);
    }
    expect(await listed()).toBe(2);
  });
});
