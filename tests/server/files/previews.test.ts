import sharp from 'sharp';
import { afterEach, describe, expect, it } from 'vitest';
import type { FileRecord } from '../../../contract/files.ts';
import { parsePreviews, previewKey, previewKeys } from '../../../server/modules/media/previews.ts';
import { DIALECTS, type TestUser } from '../../helpers/test-app.ts';
import { SERVING_CHUNK_SIZE, createHttpTestApp, sendMultipart, type HttpTestApp } from '../../helpers/upload.ts';
import { pngBomb } from './fixtures/hostile.ts';

/** A real picture (a gradient, so the encoder has something to keep), in the given format. */
function picture(width: number, height: number, format: 'png' | 'jpeg'): Promise<Buffer> {
  const pixels = Buffer.alloc(width * height * 3);
  for (let i = 0; i < pixels.length; i += 3) {
    const x = (i / 3) % width;
    pixels[i] = (x * 255) / width;
    pixels[i + 1] = 128;
    pixels[i + 2] = 255 - pixels[i]!;
  }
  const image = sharp(pixels, { raw: { width, height, channels: 3 } });
  return (format === 'png' ? image.png() : image.jpeg()).toBuffer();
}

async function waitFor<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe.each(DIALECTS)('image previews on %s (issue 11 item 9)', (dialect) => {
  let t: HttpTestApp;
  let user: TestUser;
  afterEach(async () => t?.close());

  async function put(data: Buffer, filename: string): Promise<FileRecord> {
    const res = await sendMultipart(`${t.apiUrl}/api/v1/files/upload`, { fields: { token: user.token, originalname: filename }, file: { data } });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body.file as FileRecord;
  }

  async function listed(actualName: string): Promise<FileRecord | undefined> {
    const res = await t.call<{ files: FileRecord[] }>('/api/v1/files/uploaded', { token: user.token, pageSize: 50 });
    return res.body.files.find((f) => f.actual_name === actualName);
  }

  /** The file as listed once its previews are recorded (the queue has finished with it). */
  async function settled(actualName: string): Promise<FileRecord> {
    return waitFor(`previews of ${actualName}`, async () => {
      const row = await t.deps.db.selectFrom('files').select('previews').where('actual_name', '=', actualName).executeTakeFirst();
      return row?.previews != null ? listed(actualName) : undefined;
    });
  }

  /** FILES_URL names the public origin; the test's files host listens elsewhere. */
  const served = (url: string) => `${t.filesUrl}${new URL(url).pathname}`;

  async function storageKeysOf(actualName: string): Promise<string[]> {
    const row = await t.deps.db.selectFrom('files').select(['storage_key', 'previews']).where('actual_name', '=', actualName).executeTakeFirstOrThrow();
    return previewKeys(row.storage_key, row.previews);
  }

  it('makes 160/320/640 px WebP previews of an uploaded PNG, keeping its aspect, served with the files host headers', async () => {
    t = await createHttpTestApp(dialect, { chunkSize: SERVING_CHUNK_SIZE });
    user = await t.createUser();
    const uploaded = await put(await picture(1000, 500, 'png'), 'wide.png');
    // The upload answers before previews exist: they are made off the request path.
    expect(uploaded.previews).toEqual([]);

    const file = await settled(uploaded.actual_name);
    expect(file.previews.map((p) => [p.width, p.height])).toEqual([
      [160, 80],
      [320, 160],
      [640, 320],
    ]);
    for (const preview of file.previews) {
      expect(preview.url).toBe(`${t.deps.config.urls.files}/_p/${file.actual_name}/${preview.width}.webp`);
      const res = await fetch(served(preview.url));
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe('image/webp');
      expect(res.headers.get('x-content-type-options')).toBe('nosniff');
      expect(res.headers.get('content-security-policy')).toContain('sandbox');
      expect(res.headers.get('cache-control')).toContain('max-age=31536000');
      const body = Buffer.from(await res.arrayBuffer());
      expect(Number(res.headers.get('content-length'))).toBe(body.length);
      const meta = await sharp(body).metadata();
      expect([meta.format, meta.width, meta.height]).toEqual(['webp', preview.width, preview.height]);
      const etag = res.headers.get('etag') ?? '';
      expect(etag).not.toBe('');
      expect((await fetch(served(preview.url), { headers: { 'if-none-match': etag } })).status).toBe(304);
    }
    // A width that was not made, and a name that is not ours, are 404.
    expect((await fetch(`${t.filesUrl}/_p/${file.actual_name}/1000.webp`)).status).toBe(404);
    expect((await fetch(`${t.filesUrl}/_p/..%2Fetc/160.webp`)).status).toBe(404);
  });

  // The row is read before the stored preview is opened: a file deleted in between (its row, then
  // its bytes, files.service) must answer as a deleted file does, not as a failing store.
  it('answers 404, not an error, for a preview whose stored object is gone while its row is not', async () => {
    t = await createHttpTestApp(dialect, { chunkSize: SERVING_CHUNK_SIZE });
    user = await t.createUser();
    const file = await settled((await put(await picture(400, 200, 'png'), 'gone.png')).actual_name);
    const [kept, gone] = file.previews;
    const row = await t.deps.db.selectFrom('files').select(['storage_key', 'previews']).where('actual_name', '=', file.actual_name).executeTakeFirstOrThrow();
    const stored = parsePreviews(row.previews).find((p) => p.width === gone!.width);
    await t.deps.storage.delete(previewKey(row.storage_key, stored!));
    const res = await fetch(served(gone!.url));
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ success: false, error: 'Not found.' });
    expect((await fetch(served(gone!.url), { method: 'HEAD' })).status).toBe(404);
    expect((await fetch(served(gone!.url), { headers: { 'if-none-match': `"${previewKey(row.storage_key, stored!)}"` } })).status).toBe(404);
    expect((await fetch(served(kept!.url))).status).toBe(200);
  });

  it('never upscales: a 100 px JPEG gets one 100 px preview, and a tall one stays within 4× its width', async () => {
    t = await createHttpTestApp(dialect, { chunkSize: SERVING_CHUNK_SIZE });
    user = await t.createUser();
    const small = await put(await picture(100, 60, 'jpeg'), 'small.jpg');
    const tall = await put(await picture(200, 3000, 'png'), 'tall.png');
    expect((await settled(small.actual_name)).previews.map((p) => [p.width, p.height])).toEqual([[100, 60]]);
    // 200 × 3000 fits in 160 × 640 as 43 × 640, in 320 × 1280 as 85 × 1280... never wider than the image.
    const tallPreviews = (await settled(tall.actual_name)).previews;
    for (const p of tallPreviews) expect(p.height).toBeLessThanOrEqual(4 * 640);
    expect(tallPreviews.every((p) => p.width <= 200)).toBe(true);
  });

  it('gives a decompression bomb, a broken image and a non-image no previews, and keeps serving', async () => {
    t = await createHttpTestApp(dialect, { chunkSize: SERVING_CHUNK_SIZE });
    user = await t.createUser();
    const bomb = await put(pngBomb(100_000, 100_000), 'bomb.png');
    const broken = await put(pngBomb(4000, 4000, 2).subarray(0, 200), 'broken.png');
    const text = await put(Buffer.from('just words'), 'words.txt');
    for (const f of [bomb, broken, text]) expect((await settled(f.actual_name)).previews).toEqual([]);
    expect((await fetch(`${t.filesUrl}/_p/${bomb.actual_name}/160.webp`)).status).toBe(404);
    // The queue still works after them.
    const after = await put(await picture(300, 300, 'png'), 'after.png');
    expect((await settled(after.actual_name)).previews.map((p) => p.width)).toEqual([160, 300]);
  });

  it('deletes the previews with the file: by its owner, by staff, and when the user is removed', async () => {
    t = await createHttpTestApp(dialect, { chunkSize: SERVING_CHUNK_SIZE });
    user = await t.createUser();
    const admin = t.admin;
    const own = await settled((await put(await picture(800, 600, 'png'), 'own.png')).actual_name);
    const staff = await settled((await put(await picture(800, 600, 'jpeg'), 'staff.jpg')).actual_name);
    const removed = await settled((await put(await picture(800, 600, 'png'), 'removed.png')).actual_name);
    const keys = { own: await storageKeysOf(own.actual_name), staff: await storageKeysOf(staff.actual_name), removed: await storageKeysOf(removed.actual_name) };
    for (const list of Object.values(keys)) {
      expect(list).toHaveLength(3);
      for (const key of list) expect(await t.deps.storage.stat(key)).not.toBeNull();
    }

    expect((await t.call('/api/v1/files/delete', { token: user.token, filePath: own.url })).status).toBe(200);
    expect((await t.call('/api/v1/admin/update/delete', { token: admin.token, filePath: staff.url })).status).toBe(200);
    expect((await t.call('/api/v1/admin/set/remove', { token: admin.token, userId: user.id })).status).toBe(200);

    for (const file of [own, staff, removed]) {
      for (const p of file.previews) expect((await fetch(served(p.url))).status).toBe(404);
    }
    for (const key of [...keys.own, ...keys.staff, ...keys.removed]) expect(await t.deps.storage.stat(key)).toBeNull();
  });

  it('drops previews made for a file deleted while they were being made', async () => {
    t = await createHttpTestApp(dialect, { chunkSize: SERVING_CHUNK_SIZE });
    user = await t.createUser();
    const file = await put(await picture(2000, 1500, 'png'), 'racing.png');
    // Deleted at once: the queue is most likely still rendering; its keys must not outlive the file.
    expect((await t.call('/api/v1/files/delete', { token: user.token, filePath: file.url })).status).toBe(200);
    await t.deps.previews.idle();
    expect(await t.store.storedKeys()).toEqual([]);
    // The same check sees previews when they are there (so the empty list above means something).
    const kept = await settled((await put(await picture(400, 300, 'png'), 'kept.png')).actual_name);
    expect(await t.store.storedKeys()).toHaveLength(1 + kept.previews.length);
  });

  it('records "no previews" for a file whose storage key the store refuses, instead of ending the process', async () => {
    t = await createHttpTestApp(dialect, { chunkSize: SERVING_CHUNK_SIZE });
    user = await t.createUser();
    // A row as an import or an older bench left it: the local store throws on such a key at once.
    await t.deps.db
      .insertInto('files')
      .values({ id: 'badkey1', actual_name: 'badkey0001.png', original_name: 'odd.png', user_id: user.id, size: 100, mime_type: 'image/png',
        width: null, height: null, time_created: 1_700_000_000, storage_key: 'k0', sha256: null, previews: null })
      .execute();
    t.deps.previews.enqueue('badkey1');
    await t.deps.previews.idle();
    const row = await t.deps.db.selectFrom('files').select('previews').where('id', '=', 'badkey1').executeTakeFirstOrThrow();
    expect(row.previews).toBe('[]');
    expect((await t.call('/api/v1/files/uploaded', {}, { token: user.token })).status).toBe(200);
  });
});
