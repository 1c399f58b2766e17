import crypto from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { until } from '../../helpers/poll.ts';
import { DIALECTS, type TestUser } from '../../helpers/test-app.ts';
import { createHttpTestApp, postJson, randomBytes, sendMultipart, sha256, type HttpTestApp } from '../../helpers/upload.ts';

const CHUNK = 1024;
/** S3 pieces small enough that the store shows a cut chunk's first bytes before the cut. */
const PIECE = 128;

/** Bytes of unfinished uploads in the store (local disk or S3 under TEST_STORAGE=s3). */
function partialBytesOnDisk(t: HttpTestApp): Promise<number> {
  return t.store.partialBytes();
}

describe.each(DIALECTS)('chunked uploads on %s (design §7)', (dialect) => {
  let t: HttpTestApp;
  let user: TestUser;
  afterEach(async () => t?.close());

  const upload = (fields: Record<string, string | number>, data: Buffer, extra: { abortAfter?: number; beforeCut?: () => Promise<unknown>; token?: string } = {}) =>
    sendMultipart(`${t.apiUrl}/api/v1/files/upload`, {
      fields: { token: extra.token ?? user.token, ...fields },
      file: { data, filename: 'blob' },
      abortAfter: extra.abortAfter,
      beforeCut: extra.beforeCut,
    });

  const status = (uploadId: string, token = user.token) => postJson(`${t.apiUrl}/api/v1/files/upload/status`, { token, uploadId });

  async function download(url: string): Promise<Buffer> {
    const name = url.split('/').pop() ?? '';
    const res = await fetch(`${t.filesUrl}/${name}`);
    expect(res.status).toBe(200);
    return Buffer.from(await res.arrayBuffer());
  }

  it('takes 3 chunks sent out of order and serves back the identical bytes', async () => {
    t = await createHttpTestApp(dialect, { chunkSize: CHUNK });
    user = await t.createUser();
    const data = randomBytes(CHUNK * 2 + 300);
    const uploadId = crypto.randomUUID();
    const chunk = (i: number) => data.subarray(i * CHUNK, (i + 1) * CHUNK);
    const common = { uploadId, originalname: 'video.bin', totalChunks: 3, fileSize: data.length };

    const r2 = await upload({ ...common, chunkIndex: 2, chunkHash: sha256(chunk(2)) }, chunk(2));
    expect(r2.status).toBe(200);
    expect(r2.body).toEqual({ success: true, received: [2], totalChunks: 3 });
    // Not listed while bytes are missing (design §7).
    const listed = await postJson(`${t.apiUrl}/api/v1/files/uploaded`, { token: user.token });
    expect(listed.body.totalImages).toBe(0);

    const r0 = await upload({ ...common, chunkIndex: 0, chunkHash: sha256(chunk(0)) }, chunk(0));
    expect(r0.body).toEqual({ success: true, received: [0, 2], totalChunks: 3 });
    // A chunk sent twice is harmless: 200 and nothing changes.
    const again = await upload({ ...common, chunkIndex: 0 }, chunk(0));
    expect(again.status).toBe(200);
    expect(again.body).toEqual({ success: true, received: [0, 2], totalChunks: 3 });

    const r1 = await upload({ ...common, chunkIndex: 1, chunkHash: sha256(chunk(1)) }, chunk(1));
    expect(r1.status).toBe(200);
    const file = r1.body.file as Record<string, unknown>;
    expect(file).toMatchObject({ original_name: 'video.bin', size: data.length, username: user.username, mime_type: 'application/octet-stream' });
    expect(r1.body.url).toBe(`${t.deps.config.urls.files}/${String(file.actual_name)}`);
    expect(String(file.actual_name)).toMatch(/^[A-Za-z0-9_-]{10}\.bin$/);
    expect(sha256(await download(String(r1.body.url)))).toBe(sha256(data));
    // Finished: its id names the file it became, for a client whose last answer was lost.
    expect((await status(uploadId)).body).toMatchObject({ success: true, received: [0, 1, 2], partial: null, url: r1.body.url });
  });

  it('keeps the bytes of a chunk cut off midway and completes it from the reported offset', async () => {
    t = await createHttpTestApp(dialect, { chunkSize: CHUNK, s3PieceSize: PIECE });
    user = await t.createUser();
    const data = randomBytes(CHUNK + 500);
    const uploadId = crypto.randomUUID();
    const common = { uploadId, originalname: 'cut.bin', totalChunks: 2, fileSize: data.length };
    const first = data.subarray(0, CHUNK);

    // Cut once the server is writing the chunk (the parser may hold back a few bytes that could
    // start its boundary, an S3 writer up to one piece until the request ends).
    const unflushed = t.store.driver === 's3' ? PIECE : 0;
    const writing = () => until(() => partialBytesOnDisk(t), (n) => n >= 500 - unflushed, 30_000);
    const cut = await upload({ ...common, chunkIndex: 0, chunkHash: sha256(first) }, first, { abortAfter: 600, beforeCut: writing });
    expect(cut.status).toBe(0);
    // The server notices the closed connection asynchronously (seconds on S3 when the machine is loaded).
    const s = await until(() => status(uploadId), (r) => (r.body.partial as unknown) !== null, 30_000);
    expect(s.status).toBe(200);
    expect(s.body).toMatchObject({ success: true, totalChunks: 2, received: [] });
    // The multipart parser may hold back a few bytes that could start its boundary; the rest is kept.
    const kept = (s.body.partial as { chunkIndex: number; bytes: number }).bytes;
    expect(s.body.partial).toEqual({ chunkIndex: 0, bytes: kept });
    expect(kept).toBeGreaterThan(500);
    expect(kept).toBeLessThanOrEqual(600);

    // The hash is still that of the whole chunk (design §9); only the rest is sent.
    const rest = await upload({ ...common, chunkIndex: 0, chunkOffset: kept, chunkHash: sha256(first) }, first.subarray(kept));
    expect(rest.body).toEqual({ success: true, received: [0], totalChunks: 2 });
    const last = await upload({ ...common, chunkIndex: 1 }, data.subarray(CHUNK));
    expect(last.status).toBe(200);
    expect(sha256(await download(String(last.body.url)))).toBe(sha256(data));
  });

  it('completes a chunk whose bytes all arrived before its request was cut, from an offset equal to its size', async () => {
    t = await createHttpTestApp(dialect, { chunkSize: CHUNK });
    user = await t.createUser();
    const data = randomBytes(CHUNK + 200);
    // A last byte that cannot start the closing boundary, so the parser holds nothing back.
    data[CHUNK - 1] = 0x41;
    const uploadId = crypto.randomUUID();
    const first = data.subarray(0, CHUNK);
    const common = { uploadId, originalname: 'whole-then-cut.bin', totalChunks: 2, fileSize: data.length };
    const unflushed = t.store.driver === 's3' ? PIECE : 0;
    const writing = () => until(() => partialBytesOnDisk(t), (n) => n >= CHUNK - unflushed, 30_000);
    // Every byte of chunk 0, then the connection drops before the multipart end.
    expect((await upload({ ...common, chunkIndex: 0, chunkHash: sha256(first) }, first, { abortAfter: CHUNK, beforeCut: writing })).status).toBe(0);
    const s = await until(() => status(uploadId), (r) => (r.body.partial as unknown) !== null, 30_000);
    expect(s.body).toMatchObject({ received: [], partial: { chunkIndex: 0, bytes: CHUNK } });

    // Nothing is left to send but the end: an empty part at chunkOffset = the chunk size. It was
    // refused (400, "must be less than the chunk size"), and the client sent the whole chunk again.
    const rest = await upload({ ...common, chunkIndex: 0, chunkOffset: CHUNK, chunkHash: sha256(first) }, Buffer.alloc(0));
    expect(rest.body).toEqual({ success: true, received: [0], totalChunks: 2 });
    // Its tail sent again from an offset is the same chunk, compared whole: harmless (design §9).
    // It was compared alone with the whole chunk's hash and got 409 "holds different bytes".
    const tail = await upload({ ...common, chunkIndex: 0, chunkOffset: CHUNK - 1, chunkHash: sha256(first) }, first.subarray(CHUNK - 1));
    expect(tail.body).toEqual({ success: true, received: [0], totalChunks: 2 });
    expect((await upload({ ...common, chunkIndex: 0, chunkOffset: CHUNK - 1 }, Buffer.from('Z'))).status).toBe(409);
    const last = await upload({ ...common, chunkIndex: 1 }, data.subarray(CHUNK));
    expect(last.status).toBe(200);
    expect(sha256(await download(String(last.body.url)))).toBe(sha256(data));
    // Past the chunk size there is nothing to resume: refused, nothing changed.
    const past = await upload({ uploadId: crypto.randomUUID(), originalname: 'x.bin', totalChunks: 2, chunkIndex: 0, chunkOffset: CHUNK + 1 }, Buffer.alloc(0));
    expect(past.status).toBe(400);
  });

  it('refuses a resume that skips bytes it does not have', async () => {
    t = await createHttpTestApp(dialect, { chunkSize: CHUNK });
    user = await t.createUser();
    const uploadId = crypto.randomUUID();
    const res = await upload({ uploadId, originalname: 'x.bin', totalChunks: 2, chunkIndex: 0, chunkOffset: 100 }, randomBytes(CHUNK - 100));
    expect(res.status).toBe(409);
    expect(String(res.body.error)).toContain('resume from chunkOffset 0');
  });

  it('answers a checksum mismatch with 422 retry:true and keeps nothing of that chunk', async () => {
    t = await createHttpTestApp(dialect, { chunkSize: CHUNK });
    user = await t.createUser();
    const uploadId = crypto.randomUUID();
    const chunk = randomBytes(CHUNK);
    const res = await upload({ uploadId, originalname: 'x.bin', totalChunks: 2, chunkIndex: 0, chunkHash: sha256(randomBytes(8)) }, chunk);
    expect(res.status).toBe(422);
    expect(res.body).toEqual({ success: false, error: 'Chunk checksum mismatch', retry: true });
    const s = await status(uploadId);
    expect(s.body).toEqual({ success: true, totalChunks: 2, received: [], partial: null });
    // Sending it right afterwards works.
    const ok = await upload({ uploadId, originalname: 'x.bin', totalChunks: 2, chunkIndex: 0, chunkHash: sha256(chunk) }, chunk);
    expect(ok.body).toEqual({ success: true, received: [0], totalChunks: 2 });
  });

  it('checks a chunkHash sent after the chunk as one sent before it: a mismatch is 422 and keeps nothing, a malformed one 400', async () => {
    t = await createHttpTestApp(dialect, { chunkSize: CHUNK });
    user = await t.createUser();
    const uploadId = crypto.randomUUID();
    const data = randomBytes(CHUNK + 200);
    const chunk = (i: number) => data.subarray(i * CHUNK, (i + 1) * CHUNK);
    const common = { token: user.token, uploadId, originalname: 'late.bin', totalChunks: 2, fileSize: data.length };
    const send = (i: number, chunkHash: string) =>
      sendMultipart(`${t.apiUrl}/api/v1/files/upload`, { fields: { ...common, chunkIndex: i }, file: { data: chunk(i), filename: 'blob' }, fieldsAfter: { chunkHash } });
    const listed = async () => (await postJson(`${t.apiUrl}/api/v1/files/uploaded`, { token: user.token })).body.totalImages;

    const wrong = await send(0, sha256(randomBytes(8)));
    expect(wrong.status).toBe(422);
    expect(wrong.body).toEqual({ success: false, error: 'Chunk checksum mismatch', retry: true });
    expect((await status(uploadId)).body).toEqual({ success: true, totalChunks: 2, received: [], partial: null });
    const malformed = await send(0, 'not-a-hash');
    expect(malformed.status).toBe(400);
    expect(String(malformed.body.error)).toContain('SHA-256');
    expect((await status(uploadId)).body).toMatchObject({ received: [], partial: null });
    // Upper-case hex is the same hash.
    const right = await send(0, sha256(chunk(0)).toUpperCase());
    expect(right.body).toEqual({ success: true, received: [0], totalChunks: 2 });

    // The last chunk: a mismatch lists nothing; the right hash finishes the file with these bytes.
    expect((await send(1, sha256(randomBytes(8)))).status).toBe(422);
    expect(await listed()).toBe(0);
    const done = await send(1, sha256(chunk(1)));
    expect(done.status).toBe(200);
    expect((await download(String(done.body.url))).equals(data)).toBe(true);
    expect(await listed()).toBe(1);
  });

  it('refuses a non-final chunk of the wrong size, an index out of range and a changed totalChunks', async () => {
    t = await createHttpTestApp(dialect, { chunkSize: CHUNK });
    user = await t.createUser();
    const uploadId = crypto.randomUUID();
    const common = { uploadId, originalname: 'x.bin', totalChunks: 3 };
    const short = await upload({ ...common, chunkIndex: 0 }, randomBytes(CHUNK - 1));
    expect(short.status).toBe(400);
    expect(String(short.body.error)).toContain(`exactly ${CHUNK} bytes`);
    const long = await upload({ ...common, chunkIndex: 1 }, randomBytes(CHUNK + 1));
    expect(long.status).toBe(400);
    const outOfRange = await upload({ ...common, chunkIndex: 3 }, randomBytes(10));
    expect(outOfRange.status).toBe(400);
    expect(String(outOfRange.body.error)).toContain('out of range');
    expect((await status(uploadId)).body).toMatchObject({ received: [], partial: null });

    expect((await upload({ ...common, chunkIndex: 0 }, randomBytes(CHUNK))).status).toBe(200);
    const changed = await upload({ ...common, totalChunks: 4, chunkIndex: 1 }, randomBytes(CHUNK));
    expect(changed.status).toBe(409);
  });

  it('refuses an oversize file by its announced size at chunk 0 and by the bytes that arrive', async () => {
    t = await createHttpTestApp(dialect, { chunkSize: 1_048_576 });
    user = await t.createUser();
    await t.deps.settings.set('max_file_size', 1);
    const announced = await upload({ uploadId: crypto.randomUUID(), originalname: 'big.bin', totalChunks: 2, chunkIndex: 0, fileSize: 1_048_577 }, randomBytes(1000));
    expect(announced.status).toBe(413);
    expect(String(announced.body.error)).toContain('1 MB');

    // No fileSize: the second chunk's bytes cross the limit.
    const uploadId = crypto.randomUUID();
    expect((await upload({ uploadId, originalname: 'big.bin', totalChunks: 2, chunkIndex: 0 }, randomBytes(1_048_576))).status).toBe(200);
    const crossing = await upload({ uploadId, originalname: 'big.bin', totalChunks: 2, chunkIndex: 1 }, randomBytes(10));
    expect(crossing.status).toBe(413);

    // A whole file in one request, too large by its bytes.
    const single = await sendMultipart(`${t.apiUrl}/api/v1/files/upload`, { bearer: user.token, file: { data: randomBytes(1_048_577), filename: 'big.bin' } });
    expect(single.status).toBe(413);
    expect((await postJson(`${t.apiUrl}/api/v1/files/uploaded`, { token: user.token })).body.totalImages).toBe(0);
  });

  it('takes a whole file in one request with a token field, a Bearer session or an API key, the file part first or last', async () => {
    t = await createHttpTestApp(dialect, { chunkSize: CHUNK });
    user = await t.createUser();
    const key = `stash_${crypto.randomBytes(16).toString('hex')}`;
    await t.deps.db.insertInto('api_keys').values({ id: crypto.randomBytes(12).toString('hex'), user_id: user.id, key, created_at: 0 }).execute();
    const data = Buffer.from('plain text notes\n'.repeat(200));
    const url = `${t.apiUrl}/api/v1/files/upload`;

    const viaField = await sendMultipart(url, { fields: { token: user.token }, file: { data, filename: 'notes.txt' } });
    expect(viaField.status).toBe(200);
    expect(viaField.body.file).toMatchObject({ original_name: 'notes.txt', mime_type: 'text/plain', size: data.length });
    const viaKey = await sendMultipart(url, { bearer: key, file: { data, filename: 'sharex.txt' } });
    expect(viaKey.status).toBe(200);
    const fileFirst = await sendMultipart(url, { bearer: user.token, fileFirst: true, fields: { originalname: 'renamed.txt' }, file: { data, filename: 'x' } });
    expect(fileFirst.status).toBe(200);
    expect(fileFirst.body.file).toMatchObject({ original_name: 'renamed.txt' });
    // A chunk whose fields trail the file part is placed all the same.
    const uploadId = crypto.randomUUID();
    const lateChunk = await sendMultipart(url, {
      bearer: user.token,
      fileFirst: true,
      fields: { uploadId, originalname: 'late.bin', totalChunks: 2, chunkIndex: 0 },
      file: { data: randomBytes(CHUNK) },
    });
    expect(lateChunk.body).toEqual({ success: true, received: [0], totalChunks: 2 });

    const noCredential = await sendMultipart(url, { fileFirst: true, fields: { token: user.token }, file: { data } });
    expect(noCredential.status).toBe(401);
    const listed = await postJson(`${t.apiUrl}/api/v1/files/uploaded`, { token: user.token });
    expect(listed.body.totalImages).toBe(3);
    for (const f of listed.body.files as { url: string }[]) expect(sha256(await download(f.url))).toBe(sha256(data));
  });


  it('places a file part named before its bytes as a chunk when the chunk fields follow it, and checks a chunkHash sent with a whole file', async () => {
    t = await createHttpTestApp(dialect, { chunkSize: CHUNK });
    user = await t.createUser();
    const url = `${t.apiUrl}/api/v1/files/upload`;
    const data = randomBytes(CHUNK + 300);
    const uploadId = crypto.randomUUID();
    const listed = async () => (await postJson(`${t.apiUrl}/api/v1/files/uploaded`, { token: user.token })).body.totalImages;
    const late = (i: number) =>
      sendMultipart(url, {
        fields: { token: user.token, originalname: 'video.bin' },
        file: { data: data.subarray(i * CHUNK, (i + 1) * CHUNK) },
        fieldsAfter: { uploadId, totalChunks: 2, chunkIndex: i, fileSize: data.length },
      });
    // Chunk 0 of 2, not a whole file of its first bytes.
    const first = await late(0);
    expect(first.body).toEqual({ success: true, received: [0], totalChunks: 2 });
    expect(await listed()).toBe(0);
    const done = await late(1);
    expect(done.status).toBe(200);
    expect((await download(String(done.body.url))).equals(data)).toBe(true);
    expect(await listed()).toBe(1);

    // Design §7's chunkHash, sent with a whole file, is checked: a mismatch lists nothing.
    const whole = randomBytes(500);
    const wrong = await sendMultipart(url, { fields: { token: user.token, originalname: 'x.bin', chunkHash: sha256(randomBytes(8)) }, file: { data: whole } });
    expect(wrong.status).toBe(422);
    expect(wrong.body).toEqual({ success: false, error: 'Chunk checksum mismatch', retry: true });
    const trailing = await sendMultipart(url, { fields: { token: user.token, originalname: 'x.bin' }, file: { data: whole }, fieldsAfter: { chunkHash: sha256(randomBytes(8)) } });
    expect(trailing.status).toBe(422);
    expect(await listed()).toBe(1);
    const right = await sendMultipart(url, { fields: { token: user.token, originalname: 'x.bin', chunkHash: sha256(whole) }, file: { data: whole } });
    expect(right.status).toBe(200);
    expect((await download(String(right.body.url))).equals(whole)).toBe(true);
    expect(await listed()).toBe(2);
  });
  it('keys an upload without uploadId on user + originalname + totalChunks (spec fields only)', async () => {
    t = await createHttpTestApp(dialect, { chunkSize: CHUNK });
    user = await t.createUser();
    const data = randomBytes(CHUNK + 10);
    const r0 = await upload({ originalname: 'spec.bin', totalChunks: 2, chunkIndex: 0 }, data.subarray(0, CHUNK));
    expect(r0.body).toEqual({ success: true, received: [0], totalChunks: 2 });
    const r1 = await upload({ originalname: 'spec.bin', totalChunks: 2, chunkIndex: 1 }, data.subarray(CHUNK));
    expect(r1.status).toBe(200);
    expect(sha256(await download(String(r1.body.url)))).toBe(sha256(data));
  });

  it('refuses a type outside the allowed list with 415 and drops its bytes', async () => {
    t = await createHttpTestApp(dialect, { chunkSize: CHUNK });
    user = await t.createUser();
    await t.deps.db.deleteFrom('mime_types').where('mime', 'in', ['text/plain', 'application/octet-stream']).execute();
    t.deps.settings.invalidate();
    const res = await upload({ originalname: 'a.txt', totalChunks: 1, chunkIndex: 0 }, Buffer.from('hello'));
    expect(res.status).toBe(415);
    expect(String(res.body.error)).toContain('text/plain');
    expect(await partialBytesOnDisk(t)).toBe(0);
    expect(await t.store.storedKeys()).toEqual([]);
  });

  it('refuses uploads when uploading is off, in maintenance, from a banned user and without a token', async () => {
    t = await createHttpTestApp(dialect, { chunkSize: CHUNK });
    user = await t.createUser();
    const banned = await t.createUser({ banned: true });
    const data = Buffer.from('hello');
    expect((await upload({}, data, { token: banned.token })).status).toBe(403);
    expect((await sendMultipart(`${t.apiUrl}/api/v1/files/upload`, { file: { data } })).status).toBe(401);
    expect((await sendMultipart(`${t.apiUrl}/api/v1/files/upload`, { fields: { chunkIndex: 'x' } })).status).toBe(401);
    expect((await postJson(`${t.apiUrl}/api/v1/files/upload`, {})).status).toBe(401);
    await t.deps.settings.set('allow_uploading', false);
    const off = await upload({}, data);
    expect(off.status).toBe(503);
    expect(off.body.error).toBe('Uploading is currently disabled.');
    await t.deps.settings.set('allow_uploading', true);
    await t.deps.settings.set('maintenance_mode', true);
    const maintenance = await upload({}, data);
    expect(maintenance.status).toBe(503);
    expect(maintenance.body.error).toBe('The site is under maintenance.');
  });

  it('refuses bad fields with a 400 and never a 500', async () => {
    t = await createHttpTestApp(dialect, { chunkSize: CHUNK });
    user = await t.createUser();
    const data = Buffer.from('x');
    for (const fields of <Record<string, string | number>[]>[
      { totalChunks: 'two', chunkIndex: 0 },
      { totalChunks: 2 },
      { totalChunks: 2, chunkIndex: 0, uploadId: 'not-a-uuid' },
      { totalChunks: 2, chunkIndex: 0, chunkHash: 'xyz' },
      { surprise: 1 },
    ]) {
      const res = await upload(fields, data);
      expect(res.status, JSON.stringify(fields)).toBe(400);
      expect(typeof res.body.error).toBe('string');
    }
    const json = await postJson(`${t.apiUrl}/api/v1/files/upload`, { token: user.token });
    expect(json.status).toBe(400);
  });

  it('lets only the owner see or cancel an unfinished upload, and cancel reclaims its bytes', async () => {
    t = await createHttpTestApp(dialect, { chunkSize: CHUNK });
    user = await t.createUser();
    const other = await t.createUser();
    const uploadId = crypto.randomUUID();
    await upload({ uploadId, originalname: 'x.bin', totalChunks: 2, chunkIndex: 0 }, randomBytes(CHUNK));
    expect(await partialBytesOnDisk(t)).toBe(CHUNK);
    expect((await status(uploadId, other.token)).status).toBe(404);
    expect((await postJson(`${t.apiUrl}/api/v1/files/upload/cancel`, { token: other.token, uploadId })).status).toBe(404);
    expect((await status(uploadId)).body).toMatchObject({ received: [0] });
    expect((await postJson(`${t.apiUrl}/api/v1/files/upload/cancel`, { token: user.token, uploadId })).body).toEqual({ success: true });
    expect((await status(uploadId)).status).toBe(404);
    expect(await partialBytesOnDisk(t)).toBe(0);
  });
});
