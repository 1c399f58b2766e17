import crypto from 'node:crypto';
import http from 'node:http';
import { Readable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { classifyStoreError } from '../../../server/storage/s3-errors.ts';
import { until } from '../../helpers/poll.ts';
import { DIALECTS, type TestUser } from '../../helpers/test-app.ts';
import { createHttpTestApp, postJson, randomBytes, sendMultipart, sha256, type HttpAnswer, type HttpTestApp } from '../../helpers/upload.ts';

const CHUNK = 64 * 1024;
const PIECE = 1024;

/** A body that sends `head`, then waits for `release()` before sending the rest. */
function gated(data: Buffer, headBytes: number) {
  let release!: () => void;
  const opened = new Promise<void>((r) => (release = r));
  let sentHead!: () => void;
  const headSent = new Promise<void>((r) => (sentHead = r));
  return {
    release,
    headSent,
    body: async function* () {
      yield data.subarray(0, headBytes);
      sentHead();
      await opened;
      yield data.subarray(headBytes);
    },
  };
}

describe.each(DIALECTS)('upload races on %s (issue 8 item 2, design §7)', (dialect) => {
  let t: HttpTestApp;
  let user: TestUser;
  afterEach(async () => t?.close());

  const send = (fields: Record<string, string | number>, data: Buffer | (() => AsyncIterable<Buffer>), abortAfter?: number, beforeCut?: () => Promise<unknown>) =>
    sendMultipart(`${t.apiUrl}/api/v1/files/upload`, { fields: { token: user.token, ...fields }, file: { data, filename: 'blob' }, abortAfter, beforeCut });
  const status = (uploadId: string) => postJson(`${t.apiUrl}/api/v1/files/upload/status`, { token: user.token, uploadId });
  const chunkRow = (chunkIndex: number) => t.deps.db.selectFrom('upload_chunks').selectAll().where('chunk_index', '=', chunkIndex).executeTakeFirst();
  async function listed(): Promise<{ actual_name: string; size: number }[]> {
    return t.deps.db.selectFrom('files').select(['actual_name', 'size']).where('user_id', '=', user.id).execute();
  }
  async function download(actualName: string): Promise<Buffer> {
    const res = await fetch(`${t.filesUrl}/${actualName}`);
    return Buffer.from(await res.arrayBuffer());
  }
  // What holds unfinished uploads in the store (local partial/ entries, S3 piece objects).
  const partialFiles = () => t.store.partialKeys();

  it('lets one writer hold a chunk: the second gets 409, the listed file holds exactly the winner’s bytes', async () => {
    t = await createHttpTestApp(dialect, { chunkSize: CHUNK });
    user = await t.createUser();
    const uploadId = crypto.randomUUID();
    const a = randomBytes(CHUNK);
    const b = randomBytes(CHUNK);
    const common = { uploadId, originalname: 'one.bin', totalChunks: 1, chunkIndex: 0, fileSize: CHUNK };
    const slow = gated(a, 1000);
    const first = send(common, slow.body);
    await slow.headSent;
    await until(() => chunkRow(0), (r) => r?.writer != null);

    const second = await send(common, b);
    expect(second.status).toBe(409);
    expect(second.body.error).toBe('Chunk 0 of this upload is being received by another request; retry shortly.');

    slow.release();
    const won = await first;
    expect(won.status).toBe(200);
    const files = await listed();
    expect(files).toHaveLength(1);
    expect(sha256(await download(files[0]!.actual_name))).toBe(sha256(a));
  });

  it('never lets a writer that lost its lease record over a chunk completed since, nor touch its bytes', async () => {
    t = await createHttpTestApp(dialect, { chunkSize: CHUNK, leaseMs: 1000 });
    user = await t.createUser();
    const uploadId = crypto.randomUUID();
    const a = randomBytes(CHUNK);
    const b = randomBytes(CHUNK);
    const common = { uploadId, originalname: 'taken.bin', totalChunks: 2, chunkIndex: 0, fileSize: CHUNK * 2 };
    const slow = gated(a, 2000);
    const stale = send(common, slow.body);
    await slow.headSent;
    await until(() => chunkRow(0), (r) => r?.writer != null);
    // Another process found the lease lapsed (its writer looked dead) and took the chunk over.
    await t.deps.db.updateTable('upload_chunks').set({ lease_until: 0 }).where('chunk_index', '=', 0).execute();
    const fresh = await send({ ...common, chunkHash: sha256(b) }, b);
    expect(fresh.status).toBe(200);
    expect(fresh.body.received).toEqual([0]);

    // The stale writer's next renewal finds the lease gone: it stops and answers before sending more.
    const late = await stale;
    slow.release();
    expect(late.status).toBe(409);
    expect(String(late.body.error)).toMatch(/^Chunk 0 of this upload was taken over by another request/);
    const row = await chunkRow(0);
    expect(row?.complete).toBe(1);
    expect(row?.sha256).toBe(sha256(b));

    const tail = randomBytes(CHUNK);
    const done = await send({ ...common, chunkIndex: 1 }, tail);
    expect(done.status).toBe(200);
    const file = done.body.file as { actual_name: string };
    // The listed bytes are the bytes that were hashed: the stale writer wrote none of them.
    expect(sha256(await download(file.actual_name))).toBe(sha256(Buffer.concat([b, tail])));
  });

  it('answers a chunk streaming while its upload is cancelled with 410, and leaves no bytes behind', async () => {
    t = await createHttpTestApp(dialect, { chunkSize: CHUNK, leaseMs: 1000 });
    user = await t.createUser();
    const uploadId = crypto.randomUUID();
    const data = randomBytes(CHUNK);
    const slow = gated(data, 4000);
    const streaming = send({ uploadId, originalname: 'gone.bin', totalChunks: 2, chunkIndex: 0, fileSize: CHUNK * 2 }, slow.body);
    await slow.headSent;
    await until(() => chunkRow(0), (r) => r?.writer != null);

    const cancel = await postJson(`${t.apiUrl}/api/v1/files/upload/cancel`, { token: user.token, uploadId });
    expect(cancel.status).toBe(200);
    // The writer notices on its next lease renewal and answers without waiting for the rest of the body.
    const answer = await streaming;
    slow.release();
    expect(answer.status).toBe(410);
    expect(answer.body.error).toBe('This upload was cancelled or has expired; start it again.');
    expect(await listed()).toHaveLength(0);
    expect(await partialFiles()).toEqual([]);
  });

  it('leaves no bytes behind when its upload is cancelled before its writer reaches the store', async () => {
    t = await createHttpTestApp(dialect, { chunkSize: CHUNK });
    user = await t.createUser();
    const uploadId = crypto.randomUUID();
    // The writer holds its lease but starts writing only once the cancel has discarded the
    // upload's bytes (what a busy disk or a slow store does): it makes them again.
    let cancelled = () => {};
    const afterCancel = new Promise<void>((resolve) => (cancelled = resolve));
    const writeAt = t.deps.storage.writeAt.bind(t.deps.storage);
    t.deps.storage.writeAt = async (...args) => {
      await afterCancel;
      return writeAt(...args);
    };
    const sending = send({ uploadId, originalname: 'late-writer.bin', totalChunks: 2, chunkIndex: 0, fileSize: CHUNK * 2 }, randomBytes(CHUNK));
    await until(() => chunkRow(0), (r) => r?.writer != null);
    expect((await postJson(`${t.apiUrl}/api/v1/files/upload/cancel`, { token: user.token, uploadId })).status).toBe(200);
    cancelled();
    const answer = await sending;
    expect(answer.status).toBe(410);
    expect(await listed()).toHaveLength(0);
    expect(await partialFiles()).toEqual([]);
  });

  /**
   * Sends `resend` (a chunk from an offset, whose kept bytes the server reads back for the chunk's
   * hash) and holds that read until a cancel of `uploadId` has discarded them (a slow store, or a
   * long prefix on S3): the request answers 410, as one streaming during a cancel does, and nothing is left.
   * `storeFails` makes the read, once released, fail as the store would after losing the bytes.
   */
  async function cancelWhileReadingBack(uploadId: string, resend: () => Promise<HttpAnswer>, storeFails?: Error): Promise<void> {
    let reached = () => {};
    const reading = new Promise<void>((resolve) => (reached = resolve));
    let release = () => {};
    const released = new Promise<void>((resolve) => (release = resolve));
    const readUnfinished = t.deps.storage.readUnfinished.bind(t.deps.storage);
    t.deps.storage.readUnfinished = (key, start, end) =>
      Readable.from(
        (async function* () {
          reached();
          await released;
          if (storeFails) throw storeFails;
          yield* readUnfinished(key, start, end);
        })(),
      );
    const resent = resend();
    await reading;
    expect((await postJson(`${t.apiUrl}/api/v1/files/upload/cancel`, { token: user.token, uploadId })).status).toBe(200);
    release();
    const answer = await resent;
    expect(answer.status).toBe(410);
    expect(answer.body.error).toBe('This upload was cancelled or has expired; start it again.');
    expect(await listed()).toHaveLength(0);
    expect(await partialFiles()).toEqual([]);
  }

  it('answers a resumed chunk whose kept bytes a cancel discarded while it read them back with 410, not a server error', async () => {
    t = await createHttpTestApp(dialect, { chunkSize: CHUNK, s3PieceSize: PIECE });
    user = await t.createUser();
    const unflushed = t.store.driver === 's3' ? PIECE : 0;
    const uploadId = crypto.randomUUID();
    const data = randomBytes(CHUNK);
    const fields = { uploadId, originalname: 'resumed.bin', totalChunks: 2, chunkIndex: 0, fileSize: CHUNK * 2 };
    const cutAt = 30_000;
    await send(fields, data, cutAt, () => until(() => t.store.partialBytes(), (n) => n > cutAt - 200 - unflushed));
    const kept = ((await status(uploadId)).body.partial as { bytes: number } | null)?.bytes ?? 0;
    expect(kept).toBeGreaterThan(cutAt - 200 - unflushed);
    await cancelWhileReadingBack(uploadId, () => send({ ...fields, chunkOffset: kept, chunkHash: sha256(data) }, data.subarray(kept)));
  });

  /** A complete chunk 0, then the rest of it sent again from an offset, as a client that saw only part of it acknowledged does. */
  async function resendFromOffsetUnderCancel(storeFails?: Error): Promise<void> {
    t = await createHttpTestApp(dialect, { chunkSize: CHUNK });
    user = await t.createUser();
    const uploadId = crypto.randomUUID();
    const data = randomBytes(CHUNK);
    const fields = { uploadId, originalname: 'again.bin', totalChunks: 2, chunkIndex: 0, fileSize: CHUNK * 2, chunkHash: sha256(data) };
    expect((await send(fields, data)).status).toBe(200);
    await cancelWhileReadingBack(uploadId, () => send({ ...fields, chunkOffset: 10_000 }, data.subarray(10_000)), storeFails);
  }

  it('answers a complete chunk sent again from an offset, its kept bytes discarded by a cancel while read back, with 410', async () => {
    await resendFromOffsetUnderCancel();
  });

  it('answers 410, not 503, when the store reports bytes a cancel deleted under the read-back as unavailable', async () => {
    // S3 lists a kept piece, the cancel deletes it, the GET gets NoSuchKey: the driver classifies
    // that as "unavailable" (503), which on a cancelled upload is no outage to retry.
    const noSuchKey = Object.assign(new Error('The specified key does not exist.'), { name: 'NoSuchKey', $metadata: { httpStatusCode: 404 } });
    const unavailable = classifyStoreError(noSuchKey, 'read piece');
    expect(unavailable.statusCode).toBe(503);
    await resendFromOffsetUnderCancel(unavailable);
  });

  it('answers a request that arrives after its upload was cancelled with 410 and opens nothing again', async () => {
    t = await createHttpTestApp(dialect, { chunkSize: CHUNK });
    user = await t.createUser();
    const uploadId = crypto.randomUUID();
    // The client aborted its first request and cancelled; the server hears the cancel first.
    const cancel = await postJson(`${t.apiUrl}/api/v1/files/upload/cancel`, { token: user.token, uploadId });
    expect(cancel.status).toBe(404);
    const late = await send({ uploadId, originalname: 'late.bin', totalChunks: 2, chunkIndex: 0, fileSize: CHUNK * 2 }, randomBytes(CHUNK));
    expect(late.status).toBe(410);
    expect(late.body.error).toBe('This upload was cancelled or has expired; start it again.');
    expect((await status(uploadId)).status).toBe(404);
    expect(await t.deps.db.selectFrom('uploads').select('id').execute()).toHaveLength(0);
    expect(await partialFiles()).toEqual([]);
    // A new upload (a new uploadId) of the same file goes through.
    const again = await send({ uploadId: crypto.randomUUID(), originalname: 'late.bin', totalChunks: 1, chunkIndex: 0, fileSize: 10 }, randomBytes(10));
    expect(again.status).toBe(200);
  });

  it('never mixes two same-name files of spec-only clients (no uploadId): the later one gets 409', async () => {
    t = await createHttpTestApp(dialect, { chunkSize: CHUNK });
    user = await t.createUser();
    const a = randomBytes(CHUNK * 2);
    const b = randomBytes(CHUNK * 2);
    const spec = (i: number) => ({ originalname: 'same.bin', totalChunks: 2, chunkIndex: i });
    const half = (d: Buffer, i: number) => d.subarray(i * CHUNK, (i + 1) * CHUNK);

    // Both clients at once on chunk 0: one writes, the other is refused.
    const slow = gated(half(a, 0), 500);
    const aFirst = send(spec(0), slow.body);
    await slow.headSent;
    await until(() => chunkRow(0), (r) => r?.writer != null);
    const bFirst = await send(spec(0), half(b, 0));
    expect(bFirst.status).toBe(409);
    slow.release();
    expect((await aFirst).status).toBe(200);

    // B tries again once A's chunk 0 is stored: its bytes differ, so it is refused, not dropped as a resend.
    const bAgain = await send(spec(0), half(b, 0));
    expect(bAgain.status).toBe(409);
    expect(String(bAgain.body.error)).toMatch(/already holds different bytes/);
    // A's own resend of the same bytes stays harmless.
    expect((await send(spec(0), half(a, 0))).status).toBe(200);

    const aDone = await send(spec(1), half(a, 1));
    expect(aDone.status).toBe(200);
    // B, retrying after A is done, gets its own file.
    expect((await send(spec(0), half(b, 0))).status).toBe(200);
    const bDone = await send(spec(1), half(b, 1));
    expect(bDone.status).toBe(200);

    const hashes = await Promise.all((await listed()).map(async (f) => sha256(await download(f.actual_name))));
    expect(hashes.sort()).toEqual([sha256(a), sha256(b)].sort());
  });

  it('lets go of the chunk when a request is refused before writing, so the next one is not kept waiting', async () => {
    t = await createHttpTestApp(dialect, { chunkSize: CHUNK });
    user = await t.createUser();
    const uploadId = crypto.randomUUID();
    const data = randomBytes(CHUNK);
    const common = { uploadId, originalname: 'skip.bin', totalChunks: 2, chunkIndex: 0 };
    const skipping = await send({ ...common, chunkOffset: 100 }, data.subarray(100));
    expect(skipping.status).toBe(409);
    expect(String(skipping.body.error)).toContain('resume from chunkOffset 0');
    const right = await send(common, data);
    expect(right.status).toBe(200);
    expect(right.body.received).toEqual([0]);
  });

  it('lists a file once when its last two chunks finish at the same moment', async () => {
    t = await createHttpTestApp(dialect, { chunkSize: CHUNK });
    user = await t.createUser();
    const uploadId = crypto.randomUUID();
    const data = randomBytes(CHUNK * 3);
    const common = { uploadId, originalname: 'race.bin', totalChunks: 3, fileSize: data.length };
    const part = (i: number) => data.subarray(i * CHUNK, (i + 1) * CHUNK);
    expect((await send({ ...common, chunkIndex: 0 }, part(0))).status).toBe(200);
    const answers: HttpAnswer[] = await Promise.all([send({ ...common, chunkIndex: 1 }, part(1)), send({ ...common, chunkIndex: 2 }, part(2))]);
    for (const a of answers) expect(a.status).toBe(200);
    expect(answers.filter((a) => a.body.url)).toHaveLength(1);
    const files = await listed();
    expect(files).toHaveLength(1);
    expect(sha256(await download(files[0]!.actual_name))).toBe(sha256(data));
  });

  it('answers status only once a cut request has recorded its bytes, so nothing stored is sent again', async () => {
    // Small S3 pieces, so the store shows the bytes as they arrive (local disk writes them at once).
    t = await createHttpTestApp(dialect, { chunkSize: CHUNK, s3PieceSize: PIECE });
    user = await t.createUser();
    // An S3 writer holds up to one piece in memory until it is full or the request ends.
    const unflushed = t.store.driver === 's3' ? PIECE : 0;
    for (let round = 0; round < 3; round++) {
      const uploadId = crypto.randomUUID();
      const data = randomBytes(CHUNK);
      const cutAt = 20_000 + round * 7_000;
      const fields = { token: user.token, uploadId, originalname: 'cut.bin', totalChunks: 2, chunkIndex: 0, fileSize: CHUNK * 2 };
      // Send part of the chunk, wait until the server is writing it, then drop the connection.
      const boundary = `----cut${round}`;
      const req = http.request(`${t.apiUrl}/api/v1/files/upload`, { method: 'POST', headers: { 'content-type': `multipart/form-data; boundary=${boundary}` } });
      req.on('error', () => {});
      for (const [k, v] of Object.entries(fields)) req.write(`--${boundary}\r\nContent-Disposition: form-data; name="${k}"\r\n\r\n${String(v)}\r\n`);
      req.write(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="blob"\r\nContent-Type: application/octet-stream\r\n\r\n`);
      req.write(data.subarray(0, cutAt));
      // Wait until the server has written what it received (the parser may hold back a few bytes).
      await until(() => t.store.partialBytes(), (n) => n > cutAt - 200 - unflushed);
      req.destroy();
      // Asked at once, no polling: the answer must already hold what the cut request stored.
      const s = await status(uploadId);
      expect(s.status).toBe(200);
      const partial = s.body.partial as { chunkIndex: number; bytes: number } | null;
      // The multipart parser may hold back a few bytes that could start its boundary; the rest is kept.
      expect(partial?.chunkIndex).toBe(0);
      expect(partial?.bytes).toBeGreaterThan(cutAt - 200);
      expect(partial?.bytes).toBeLessThanOrEqual(cutAt);
      const kept = partial?.bytes ?? 0;
      const rest = await send({ ...fields, chunkOffset: kept, chunkHash: sha256(data) }, data.subarray(kept));
      expect(rest.body).toEqual({ success: true, received: [0], totalChunks: 2 });
      expect((await postJson(`${t.apiUrl}/api/v1/files/upload/cancel`, { token: user.token, uploadId })).status).toBe(200);
    }
  });
});
