/// <reference types="node" />
import { afterEach, describe, expect, it } from 'vitest';
import { DIALECTS } from '../helpers/test-app.ts';
import { fixedStorage } from './helpers/fakes.ts';
import { bytesOf, CHUNK, createHarness, download, sha256, textFile, waitForState, waitUntil, type Harness } from './helpers/queue-harness.ts';
import type { UploadStore } from '../../src/upload/store/upload-store.ts';

/** Storing chunk `index` waits until `until` holds (to see what the sender does meanwhile). */
function holdPut(store: UploadStore, index: number, until: () => boolean): void {
  const putChunk = store.putChunk.bind(store);
  store.putChunk = async (chunk) => {
    if (chunk.index === index) await waitUntil(until);
    return putChunk(chunk);
  };
}

/**
 * The upload queue against the real API (design §7 upload protocol + resume extensions), through
 * a proxy that counts the chunk bytes the server receives and can cut connections.
 */
describe.each(DIALECTS)('upload queue on %s', (dialect) => {
  let h: Harness;
  afterEach(async () => {
    await h?.close();
  });

  it('sends chunks in order with the resume fields before the file, starting before the copy ends, and drops each acknowledged chunk', async () => {
    h = await createHarness(dialect);
    const { queue, store } = await h.openTab();
    const file = textFile(CHUNK * 2 + 1000);
    // Chunk 2 may only be written once chunk 0 is on the wire: a queue that waits for the
    // whole copy before sending would never finish.
    holdPut(store, 2, () => h.proxy.uploads.length >= 1);
    const [queued] = await queue.enqueue([file]);
    expect(queued).toMatchObject({ name: 'notes.txt', size: file.size, persistent: true });
    const done = await waitForState(queue, queued!.id, ['done', 'failed']);
    expect(done.error).toBeUndefined();
    expect(done).toMatchObject({ state: 'done', ackedBytes: file.size });

    const original = await bytesOf(file);
    expect(h.proxy.uploads.map((u) => u.fields.chunkIndex)).toEqual(['0', '1', '2']);
    h.proxy.uploads.forEach((u, i) => {
      expect(Object.keys(u.fields)).toEqual(['uploadId', 'fileSize', 'chunkHash', 'chunkIndex', 'totalChunks', 'originalname', 'token']);
      expect(u.fields).toMatchObject({ uploadId: queued!.id, fileSize: String(file.size), totalChunks: '3', originalname: 'notes.txt' });
      expect(u.fields.chunkHash).toBe(sha256(original.subarray(i * CHUNK, (i + 1) * CHUNK)));
    });
    expect((await download(h.t, done.url!)).equals(original)).toBe(true);
    expect(await store.chunkIndexes(queued!.id)).toEqual([]);
  });

  it('sends a chunk from the picked file as soon as it is hashed, before IndexedDB has stored it, and keeps no chunk once done', async () => {
    h = await createHarness(dialect);
    const { queue, store } = await h.openTab();
    const file = textFile(CHUNK * 2 + 300);
    // Issue 9: storing chunk 0 waits until chunk 0 is on the wire; a sender that reads only
    // the stored copy would wait for it forever.
    holdPut(store, 0, () => h.proxy.uploads.length >= 1);
    const [queued] = await queue.enqueue([file]);
    const done = await waitForState(queue, queued!.id, ['done', 'failed']);
    expect(done).toMatchObject({ state: 'done', ackedBytes: file.size });
    expect((await download(h.t, done.url!)).equals(await bytesOf(file))).toBe(true);
    expect(h.proxy.uploads.map((u) => u.fields.chunkIndex)).toEqual(['0', '1', '2']);
    await waitUntil(async () => (await store.get(queued!.id))?.writeComplete === true);
    expect(await store.chunkIndexes(queued!.id)).toEqual([]);
  });

  it('resumes after a dropped connection, waits while offline, and sends only the rest of the cut chunk', async () => {
    h = await createHarness(dialect);
    const { queue } = await h.openTab();
    const file = textFile(CHUNK * 2 + 500);
    h.proxy.cutNextUpload(Infinity);
    h.proxy.cutNextUpload(20_000);
    h.network.set(false);
    const [queued] = await queue.enqueue([file]);
    await waitForState(queue, queued!.id, ['offline']);
    expect(h.proxy.uploads).toHaveLength(0);
    h.network.set(true);
    const done = await waitForState(queue, queued!.id, ['done', 'failed']);
    expect(done.state).toBe('done');

    const resumed = h.proxy.uploads.filter((u) => u.fields.chunkIndex === '1');
    expect(resumed.map((u) => [u.cut, u.fields.chunkOffset])).toEqual([
      [true, undefined],
      [false, '20000'],
    ]);
    // Every byte reached the server exactly once.
    expect(h.proxy.totalFileBytes()).toBe(file.size);
    expect((await download(h.t, done.url!)).equals(await bytesOf(file))).toBe(true);
  });

  it('takes the link from status when the last chunk was stored but its answer lost, sending nothing again', async () => {
    h = await createHarness(dialect);
    const { queue } = await h.openTab();
    const file = textFile(CHUNK + 700);
    h.proxy.cutNextUpload(Infinity);
    h.proxy.loseNextAnswer();
    const [queued] = await queue.enqueue([file]);
    const done = await waitForState(queue, queued!.id, ['done', 'failed']);
    expect(done.error).toBeUndefined();
    expect(done.state).toBe('done');
    // The server listed the file once; the client learned its link from files/upload/status
    // (design §7) instead of sending the whole file again and having it listed twice.
    expect(h.proxy.uploads.map((u) => u.fields.chunkIndex)).toEqual(['0', '1']);
    expect(h.proxy.totalFileBytes()).toBe(file.size);
    const listed = await h.t.deps.db.selectFrom('files').select('actual_name').execute();
    expect(listed.map((f) => f.actual_name)).toEqual([done.url!.split('/').pop()]);
    expect((await download(h.t, done.url!)).equals(await bytesOf(file))).toBe(true);
  });

  it('resumes after a reload: a new queue over the same IndexedDB finishes without resending stored bytes', async () => {
    h = await createHarness(dialect);
    const first = await h.openTab();
    const file = textFile(CHUNK * 3 + 10);
    h.proxy.cutNextUpload(Infinity);
    h.proxy.stallNextUpload(30_000);
    const [queued] = await first.queue.enqueue([file]);
    await waitUntil(() => h.proxy.uploads[1]?.cut === true);
    await first.queue.close(); // the page goes away mid-chunk
    first.store.close();
    await waitUntil(async () => (await h.storedPartialBytes(queued!.id)) === 30_000);

    const second = await h.openTab();
    const before = (await second.queue.list()).find((i) => i.id === queued!.id);
    expect(before?.state).not.toBe('done');
    const done = await waitForState(second.queue, queued!.id, ['done', 'failed']);
    expect(done.state).toBe('done');
    expect(h.proxy.uploads.find((u) => u.fields.chunkIndex === '1' && !u.cut)?.fields.chunkOffset).toBe('30000');
    expect(h.proxy.totalFileBytes()).toBe(file.size);
    expect((await download(h.t, done.url!)).equals(await bytesOf(file))).toBe(true);
  });

  it('resumes after the server restarts', async () => {
    h = await createHarness(dialect);
    const { queue } = await h.openTab();
    const file = textFile(CHUNK * 2 + 77);
    h.proxy.cutNextUpload(Infinity);
    h.proxy.cutNextUpload(40_000, { thenDown: true });
    const [queued] = await queue.enqueue([file]);
    await waitUntil(() => h.proxy.uploads[1]?.cut === true);
    // The restart comes once the server has stored the 40,000 bytes it was sent. (Restarting
    // sooner races the request itself: a closing server answers it 503 and keeps nothing, so
    // the client rightly sends the whole chunk again.)
    await waitUntil(async () => (await h.storedPartialBytes(queued!.id)) === 40_000);
    await h.restartServer();
    // Still retrying against a dead address, without giving up.
    await new Promise((r) => setTimeout(r, 300));
    expect((await queue.list())[0]?.state).toBe('uploading');
    h.proxy.down = false;
    const done = await waitForState(queue, queued!.id, ['done', 'failed']);
    expect(done.state).toBe('done');
    expect(h.proxy.uploads.find((u) => u.fields.chunkIndex === '1' && !u.cut)?.fields.chunkOffset).toBe('40000');
    expect(h.proxy.totalFileBytes()).toBe(file.size);
    expect((await download(h.t, done.url!)).equals(await bytesOf(file))).toBe(true);
  });

  it('waits out a 429 for its Retry-After, resends a chunk with a checksum mismatch, and stops on a refusal with the server message', async () => {
    h = await createHarness(dialect);
    const { queue } = await h.openTab();
    h.proxy.answerNextUpload(429, { success: false, error: 'Too many requests.' }, { 'retry-after': '1' });
    h.proxy.answerNextUpload(422, { success: false, error: 'Chunk checksum mismatch', retry: true });
    const started = Date.now();
    const [ok] = await queue.enqueue([textFile(1000, 'a.txt')]);
    const done = await waitForState(queue, ok!.id, ['done', 'failed']);
    expect(done.state).toBe('done');
    expect(Date.now() - started).toBeGreaterThanOrEqual(1000);
    expect(h.proxy.uploads).toHaveLength(3);

    h.proxy.answerNextUpload(413, { success: false, error: 'The file is larger than the maximum of 1 MB.' });
    const [refused] = await queue.enqueue([textFile(1000, 'b.txt')]);
    const failed = await waitForState(queue, refused!.id, ['done', 'failed']);
    expect(failed).toMatchObject({ state: 'failed', error: 'The file is larger than the maximum of 1 MB.' });
    await new Promise((r) => setTimeout(r, 200));
    expect(h.proxy.uploads).toHaveLength(4);
  });

  it('falls back to sending from the File when the storage estimate is short', async () => {
    h = await createHarness(dialect);
    const { queue, store } = await h.openTab({ storage: fixedStorage(1024 * 1024, 1000 * 1024) });
    const file = textFile(CHUNK * 2 + 3);
    const [queued] = await queue.enqueue([file]);
    expect(queued?.persistent).toBe(false);
    expect(await store.list()).toEqual([]);
    const done = await waitForState(queue, queued!.id, ['done', 'failed']);
    expect(done).toMatchObject({ state: 'done', persistent: false });
    expect((await download(h.t, done.url!)).equals(await bytesOf(file))).toBe(true);
  });

  it('falls back to sending from the File when IndexedDB refuses a write (quota exceeded)', async () => {
    h = await createHarness(dialect);
    const { queue, store } = await h.openTab();
    const putChunk = store.putChunk.bind(store);
    store.putChunk = async (chunk) => {
      if (chunk.index >= 1) throw new DOMException('The quota has been exceeded.', 'QuotaExceededError');
      return putChunk(chunk);
    };
    const file = textFile(CHUNK * 2 + 9);
    const [queued] = await queue.enqueue([file]);
    const done = await waitForState(queue, queued!.id, ['done', 'failed']);
    expect(done).toMatchObject({ state: 'done', persistent: false });
    expect(await store.list()).toEqual([]);
    expect(await store.chunkIndexes(queued!.id)).toEqual([]);
    expect((await download(h.t, done.url!)).equals(await bytesOf(file))).toBe(true);
    // Whatever the stored copy had already sent was not sent again.
    expect(h.proxy.totalFileBytes()).toBe(file.size);
  });

  it('says an upload is not persistent when IndexedDB refuses it outright, and still sends it', async () => {
    h = await createHarness(dialect);
    const { queue, store } = await h.openTab();
    store.put = async () => {
      throw new DOMException('The quota has been exceeded.', 'QuotaExceededError');
    };
    const file = textFile(CHUNK + 11);
    const [queued] = await queue.enqueue([file]);
    expect(queued?.persistent).toBe(false);
    const done = await waitForState(queue, queued!.id, ['done', 'failed']);
    expect(done).toMatchObject({ state: 'done', persistent: false });
    expect((await download(h.t, done.url!)).equals(await bytesOf(file))).toBe(true);
  });

  it('two tabs never send the same upload twice, and a tab that closes hands the queue over', async () => {
    h = await createHarness(dialect);
    const a = await h.openTab();
    const b = await h.openTab();
    const f1 = textFile(CHUNK * 2 + 1, 'one.txt', 1);
    const f2 = textFile(CHUNK + 2, 'two.txt', 2);
    const [u1] = await a.queue.enqueue([f1]);
    const [u2] = await b.queue.enqueue([f2]);
    await waitForState(a.queue, u1!.id, ['done']);
    await waitForState(a.queue, u2!.id, ['done']);
    // Both tabs see the same queue.
    expect((await b.queue.list()).map((i) => i.state)).toEqual(['done', 'done']);
    const sent = h.proxy.uploads.map((u) => `${u.fields.uploadId}/${u.fields.chunkIndex}`);
    expect(new Set(sent).size).toBe(sent.length);
    expect(h.proxy.totalFileBytes()).toBe(f1.size + f2.size);

    // The sending tab closes; the other one picks up what is queued next.
    await a.queue.close();
    const f3 = textFile(CHUNK + 5, 'three.txt', 3);
    const [u3] = await b.queue.enqueue([f3]);
    const done = await waitForState(b.queue, u3!.id, ['done', 'failed']);
    expect(done.state).toBe('done');
    expect((await download(h.t, done.url!)).equals(await bytesOf(f3))).toBe(true);
  });
});
