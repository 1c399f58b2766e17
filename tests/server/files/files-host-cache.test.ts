import { afterEach, describe, expect, it } from 'vitest';
import { DIALECTS } from '../../helpers/test-app.ts';
import { SERVING_CHUNK_SIZE, createHttpTestApp, randomBytes, sendMultipart, type HttpTestApp } from '../../helpers/upload.ts';
import { FileMetaCache, TRUST_MS, type FileMeta } from '../../../server/files-host/file-meta-cache.ts';
import { markForRemoval } from '../../../server/modules/users/account-removals.ts';
import { nowSeconds } from '../../../server/lib/ids.ts';

/** Issue 9: the files host answers known names from memory, and never serves a deleted file. */
describe.each(DIALECTS)('the files host metadata cache on %s', (dialect) => {
  let t: HttpTestApp;
  afterEach(async () => t?.close());

  async function upload(size = 3000) {
    const user = await t.createUser();
    const res = await sendMultipart(`${t.apiUrl}/api/v1/files/upload`, { fields: { token: user.token, originalname: 'cached.bin' }, file: { data: randomBytes(size) } });
    expect(res.status).toBe(200);
    const file = res.body.file as { actual_name: string };
    return { user, name: file.actual_name };
  }
  const get = async (name: string, headers: Record<string, string> = {}, method = 'GET') => {
    const res = await fetch(`${t.filesUrl}/${name}`, { method, headers });
    await res.arrayBuffer();
    return res;
  };

  it('answers a file it has served without reading its row again', async () => {
    t = await createHttpTestApp(dialect, { chunkSize: SERVING_CHUNK_SIZE });
    const { name } = await upload();
    const first = await get(name);
    expect(first.status).toBe(200);
    // Hide the row only (the bytes stay): an answer now can only come from the cache.
    const row = await t.deps.db.selectFrom('files').selectAll().where('actual_name', '=', name).executeTakeFirstOrThrow();
    await t.deps.db.deleteFrom('files').where('id', '=', row.id).execute();
    const again = await get(name);
    expect(again.status).toBe(200);
    expect(again.headers.get('etag')).toBe(first.headers.get('etag'));
    expect(again.headers.get('content-disposition')).toBe(first.headers.get('content-disposition'));
    expect(again.headers.get('content-length')).toBe('3000');
    expect((await get(name, { 'if-none-match': first.headers.get('etag') ?? '' })).status).toBe(304);
  });

  // Past 64 KiB (SMALL_BODY) a file is streamed from the store rather than kept in memory: on
  // S3 that read was lazy, and a deleted file answered 503 "store unavailable" for a minute.
  it.each([3000, 200_000])('answers 404 at once for a cached file of %i bytes deleted through the API or by another process', async (size) => {
    t = await createHttpTestApp(dialect, { chunkSize: SERVING_CHUNK_SIZE });
    const a = await upload(size);
    const b = await upload(size);
    for (const f of [a, b]) {
      expect((await get(f.name)).status).toBe(200);
      expect((await get(f.name, {}, 'HEAD')).status).toBe(200);
    }
    const etagB = (await get(b.name, {}, 'HEAD')).headers.get('etag') ?? '';

    expect((await t.call('/api/v1/files/delete', { filePath: a.name }, { token: a.user.token })).status).toBe(200);
    expect((await get(a.name)).status).toBe(404);
    expect((await get(a.name, {}, 'HEAD')).status).toBe(404);
    expect((await get(a.name, { range: 'bytes=0-9' })).status).toBe(404);

    // Another process deletes the row and then the bytes, as files.service does: this process
    // was never told, and must still not answer from memory.
    const row = await t.deps.db.selectFrom('files').selectAll().where('actual_name', '=', b.name).executeTakeFirstOrThrow();
    await t.deps.db.deleteFrom('files').where('id', '=', row.id).execute();
    await t.deps.storage.delete(row.storage_key);
    expect((await get(b.name, { 'if-none-match': etagB })).status).toBe(404);
    expect((await get(b.name, {}, 'HEAD')).status).toBe(404);
    expect((await get(b.name)).status).toBe(404);
  });

  /** Served twice (the second from the cache, on the fast path), as HEAD too; its storage key. */
  async function cached(name: string): Promise<{ key: string; etag: string }> {
    for (let i = 0; i < 2; i += 1) expect((await get(name)).status).toBe(200);
    const head = await get(name, {}, 'HEAD');
    expect(head.status).toBe(200);
    const row = await t.deps.db.selectFrom('files').select('storage_key').where('actual_name', '=', name).executeTakeFirstOrThrow();
    return { key: row.storage_key, etag: head.headers.get('etag') ?? '' };
  }

  /** The store refuses to delete these keys' objects (unreachable for them): their bytes stay. */
  function refuseDeletes(keys: string[]): void {
    const real = t.deps.storage.delete.bind(t.deps.storage);
    t.deps.storage.delete = async (key) => {
      if (keys.includes(key)) throw new Error('the store is unreachable');
      await real(key);
    };
  }

  async function expectGone(name: string, etag: string): Promise<void> {
    expect((await get(name)).status).toBe(404);
    expect((await get(name)).status).toBe(404);
    expect((await get(name, {}, 'HEAD')).status).toBe(404);
    expect((await get(name, { range: 'bytes=0-9' })).status).toBe(404);
    expect((await get(name, { 'if-none-match': etag })).status).toBe(404);
  }

  // The stored object outlives its row when the store refuses the delete (doomed-bytes.ts keeps
  // it for the next pass): the existence check passed, and the cache answered 200 for a minute.
  it.each([3000, 200_000])('answers 404 at once for a cached file of %i bytes deleted through the API while the store refuses to delete its bytes', async (size) => {
    t = await createHttpTestApp(dialect, { chunkSize: SERVING_CHUNK_SIZE });
    const { user, name } = await upload(size);
    const { key, etag } = await cached(name);
    refuseDeletes([key]);
    expect((await t.call('/api/v1/files/delete', { filePath: name }, { token: user.token })).status).toBe(200);
    expect(await t.store.storedKeys()).toContain(key);
    await expectGone(name, etag);
  });

  // An account marked for removal is hidden at once, its bytes deleted in batches after.
  it.each([3000, 200_000])('answers 404 at once for the cached %i-byte files of an account an admin removes, while their bytes remain', async (size) => {
    t = await createHttpTestApp(dialect, { chunkSize: SERVING_CHUNK_SIZE });
    // Marked only, as admin/set/remove does first: rows and bytes all still there.
    const hidden = await upload(size);
    const hiddenFile = await cached(hidden.name);
    expect(await markForRemoval(t.deps.db, hidden.user.id)).toBe(true);
    expect(await t.store.storedKeys()).toContain(hiddenFile.key);
    await expectGone(hidden.name, hiddenFile.etag);

    // Removed through the API, the store refusing the file's bytes: the rows go, the bytes stay.
    const removed = await upload(size);
    const removedFile = await cached(removed.name);
    refuseDeletes([removedFile.key]);
    const res = await t.call('/api/v1/admin/set/remove', { userId: removed.user.id }, { token: t.admin.token });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(await t.store.storedKeys()).toContain(removedFile.key);
    await expectGone(removed.name, removedFile.etag);
  });

  // Another process's delete or removal is not told to this one: its entries stop answering
  // without their rows read again after TRUST_MS, never a minute.
  it('stops serving a cached file within TRUST_MS once another process deleted its row or hid its account, its bytes still stored', async () => {
    t = await createHttpTestApp(dialect, { chunkSize: SERVING_CHUNK_SIZE });
    const deleted = await upload(3000);
    const hidden = await upload(200_000);
    const files = [await cached(deleted.name), await cached(hidden.name)];
    // What another process's database writes look like from here: no word to this process.
    const since = Date.now();
    await t.deps.db.deleteFrom('files').where('actual_name', '=', deleted.name).execute();
    await t.deps.db.updateTable('users').set({ removing_since: nowSeconds() }).where('id', '=', hidden.user.id).execute();
    for (const f of files) expect(await t.store.storedKeys()).toContain(f.key);
    const statuses = async () => [(await get(deleted.name)).status, (await get(hidden.name)).status, (await get(hidden.name, {}, 'HEAD')).status];
    await expect.poll(statuses, { timeout: TRUST_MS + 3_000, interval: 100 }).toEqual([404, 404, 404]);
    expect(Date.now() - since).toBeLessThan(TRUST_MS + 3_000);
    await expectGone(deleted.name, files[0]!.etag);
    await expectGone(hidden.name, files[1]!.etag);
  });
});

describe('FileMetaCache', () => {
  const meta = (key: string, owner = 'u'): FileMeta => ({ storageKey: key, owner, size: 1, timeCreated: 0, etag: `"${key}"`, headers: {}, headers200: {} });

  it('keeps at most its capacity, dropping the least recently used first', () => {
    const cache = new FileMetaCache(2);
    cache.set('a', meta('a'));
    cache.set('b', meta('b'));
    cache.get('a');
    cache.set('c', meta('c'));
    expect(cache.size).toBe(2);
    expect(cache.get('b')).toBeUndefined();
    expect(cache.get('a')?.storageKey).toBe('a');
    expect(cache.get('c')?.storageKey).toBe('c');
  });

  it('stops answering with an entry past TRUST_MS until its row is read again, its bytes kept for the same object', () => {
    let now = 0;
    const cache = new FileMetaCache(10, 60_000, () => now);
    cache.set('a', meta('a'));
    cache.keepBody('a', Buffer.alloc(10));
    now = TRUST_MS - 1;
    expect(cache.get('a')?.body?.length).toBe(10);
    now = TRUST_MS;
    expect(cache.get('a')).toBeUndefined();
    expect(cache.keptBodyBytes).toBe(10);
    // The row read again names the same object: trusted anew, with the bytes already kept.
    cache.set('a', meta('a'));
    expect(cache.get('a')?.body?.length).toBe(10);
    expect(cache.keptBodyBytes).toBe(10);
    // Another object under the name (never happens, design §8): its bytes are not the kept ones.
    now = 2 * TRUST_MS;
    cache.set('a', meta('other'));
    expect(cache.get('a')?.body).toBeUndefined();
    expect(cache.keptBodyBytes).toBe(0);
  });

  it('forgets files that went in this process, by name or by owner, and counts each time', () => {
    const cache = new FileMetaCache();
    cache.set('a', meta('a', 'alice'));
    cache.set('b', meta('b', 'bob'));
    cache.set('c', meta('c', 'bob'));
    cache.keepBody('b', Buffer.alloc(10));
    const before = cache.forgotten;
    cache.forget({ names: ['a'] });
    expect(cache.get('a')).toBeUndefined();
    cache.forget({ owner: 'bob' });
    expect([cache.get('b'), cache.get('c')]).toEqual([undefined, undefined]);
    expect(cache.size).toBe(0);
    expect(cache.keptBodyBytes).toBe(0);
    expect(cache.forgotten).toBe(before + 2);
  });

  it('forgets an entry after its lifetime', () => {
    let now = 0;
    const cache = new FileMetaCache(10, 1000, () => now);
    cache.set('a', meta('a'));
    now = 999;
    expect(cache.get('a')).toBeDefined();
    now = 2000;
    expect(cache.get('a')).toBeUndefined();
  });
});

describe.each(DIALECTS)('small files on %s', (dialect) => {
  let t: HttpTestApp;
  afterEach(async () => t?.close());

  it('answers a small file from memory after its first read, ranges included, until it is deleted', async () => {
    t = await createHttpTestApp(dialect, { chunkSize: SERVING_CHUNK_SIZE });
    const user = await t.createUser();
    const data = randomBytes(4096);
    const res = await sendMultipart(`${t.apiUrl}/api/v1/files/upload`, { fields: { token: user.token, originalname: 'small.bin' }, file: { data } });
    const name = (res.body.file as { actual_name: string }).actual_name;
    const bytes = async (headers: Record<string, string> = {}) => Buffer.from(await (await fetch(`${t.filesUrl}/${name}`, { headers })).arrayBuffer());
    expect((await bytes()).equals(data)).toBe(true);
    // Rewrite the stored object behind the server's back: what comes back now is what it kept.
    const row = await t.deps.db.selectFrom('files').select('storage_key').where('actual_name', '=', name).executeTakeFirstOrThrow();
    await t.store.overwriteStored(row.storage_key, Buffer.alloc(4096, 0));
    expect((await bytes()).equals(data)).toBe(true);
    expect((await bytes({ range: 'bytes=100-199' })).equals(data.subarray(100, 200))).toBe(true);
    await t.deps.storage.delete(row.storage_key);
    expect((await fetch(`${t.filesUrl}/${name}`)).status).toBe(404);
  });

  // Link previewers ask with HEAD first, and browsers revalidate with If-None-Match: the name was
  // then cached without its bytes, and the fast path opened, read and closed the file on every
  // GET until the entry expired, where a kept body is answered from memory.
  it.each(['HEAD', 'a 304'])('keeps a small file in memory after a first request that asked for no bytes (%s)', async (first) => {
    t = await createHttpTestApp(dialect, { chunkSize: SERVING_CHUNK_SIZE });
    const user = await t.createUser();
    const data = randomBytes(4096);
    const res = await sendMultipart(`${t.apiUrl}/api/v1/files/upload`, { fields: { token: user.token, originalname: 'small.bin' }, file: { data } });
    const name = (res.body.file as { actual_name: string }).actual_name;
    const row = await t.deps.db.selectFrom('files').select('storage_key').where('actual_name', '=', name).executeTakeFirstOrThrow();
    const url = `${t.filesUrl}/${name}`;
    const opening = first === 'HEAD' ? await fetch(url, { method: 'HEAD' }) : await fetch(url, { headers: { 'if-none-match': `"${row.storage_key}"` } });
    expect(opening.status).toBe(first === 'HEAD' ? 200 : 304);
    const bytes = async () => Buffer.from(await (await fetch(url)).arrayBuffer());
    // Two GETs: the first may go through Fastify's route, the second takes the fast path.
    expect((await bytes()).equals(data)).toBe(true);
    expect((await bytes()).equals(data)).toBe(true);
    // Rewritten behind the server's back: a kept body still answers with what was uploaded.
    await t.store.overwriteStored(row.storage_key, Buffer.alloc(4096, 0));
    expect((await bytes()).equals(data)).toBe(true);
    expect((await bytes()).equals(data)).toBe(true);
  });
});

describe('FileMetaCache bodies', () => {
  const meta = (key: string, owner = 'u'): FileMeta => ({ storageKey: key, owner, size: 1, timeCreated: 0, etag: `"${key}"`, headers: {}, headers200: {} });

  it('keeps bodies only within its byte budget and frees them with their entry', () => {
    const cache = new FileMetaCache(10, 60_000, Date.now, 100);
    cache.set('a', meta('a'));
    cache.set('b', meta('b'));
    cache.keepBody('a', Buffer.alloc(60));
    cache.keepBody('b', Buffer.alloc(60));
    expect(cache.get('a')?.body?.length).toBe(60);
    expect(cache.get('b')?.body).toBeUndefined();
    cache.delete('a');
    expect(cache.keptBodyBytes).toBe(0);
    cache.keepBody('b', Buffer.alloc(60));
    expect(cache.keptBodyBytes).toBe(60);
  });

  // A burst of small files nobody asks for again must not keep every later file on disk: their
  // entries outlive their lifetime only until room is wanted.
  it('makes room for a body by dropping entries past their lifetime, least recently used first, and no live one', () => {
    let now = 0;
    const cache = new FileMetaCache(10, 1_000, () => now, 100);
    cache.set('old', meta('old'));
    cache.keepBody('old', Buffer.alloc(60));
    now = 500;
    cache.set('live', meta('live'));
    cache.keepBody('live', Buffer.alloc(30));
    expect(cache.keptBodyBytes).toBe(90);
    now = 1_200;
    cache.set('new', meta('new'));
    cache.keepBody('new', Buffer.alloc(60));
    expect(cache.get('new')?.body?.length).toBe(60);
    expect(cache.get('live')?.body?.length).toBe(30);
    expect(cache.get('old')).toBeUndefined();
    expect(cache.keptBodyBytes).toBe(90);
    // No entry past its lifetime: nothing live is dropped, and the body is not kept.
    cache.set('more', meta('more'));
    expect(cache.wouldKeep(20)).toBe(false);
    cache.keepBody('more', Buffer.alloc(20));
    expect(cache.get('more')?.body).toBeUndefined();
    expect(cache.get('live')?.body?.length).toBe(30);
    expect(cache.size).toBe(3);
  });
});
