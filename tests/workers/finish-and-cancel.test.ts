/// <reference types="node" />
import { afterEach, describe, expect, it } from 'vitest';
import { DIALECTS } from '../helpers/test-app.ts';
import { StorageError } from '../../server/storage/storage.ts';
import { fetchTransport, type HttpAnswer, type Transport } from '../../src/upload/queue/transport.ts';
import { CANCELLED_TOO_LATE } from '../../src/upload/queue/records.ts';
import { FileUnreadable } from '../../src/upload/store/write-chunks.ts';
import { fixedStorage } from './helpers/fakes.ts';
import { bytesOf, CHUNK, createHarness, download, textFile, waitForState, waitUntil, type Harness } from './helpers/queue-harness.ts';

/** The server's store fails the next finalize the way S3 does when it throttles (tests/server/files/finish-outage.test.ts). */
function failNextFinalize(h: Harness): { failed: () => boolean } {
  const storage = h.t.deps.storage;
  const finalize = storage.finalize.bind(storage);
  let failed = false;
  storage.finalize = async (key, size) => {
    if (!failed) {
      failed = true;
      throw new StorageError(503, 'The file store is unavailable right now; please try again shortly.', 'SlowDown');
    }
    return finalize(key, size);
  };
  return { failed: () => failed };
}

/** The server's finish waits at finalize until released: every byte is in, the file not listed yet. */
function holdFinalize(h: Harness): { reached: () => boolean; done: () => boolean; release: () => void } {
  const storage = h.t.deps.storage;
  const finalize = storage.finalize.bind(storage);
  let reached = false;
  let done = false;
  let release = () => {};
  const gate = new Promise<void>((resolve) => (release = resolve));
  storage.finalize = async (key, size) => {
    reached = true;
    await gate;
    await finalize(key, size);
    done = true;
  };
  return { reached: () => reached, done: () => done, release };
}

/** fetch, recording the JSON calls' answers; `answer` may reply in the server's place. */
function recording(answer: (path: string) => HttpAnswer | undefined = () => undefined): Transport & { calls: { path: string; status: number }[] } {
  const calls: { path: string; status: number }[] = [];
  return {
    calls,
    postMultipart: (request) => fetchTransport.postMultipart(request),
    async postJson(url, body, signal) {
      const path = new URL(url).pathname;
      const res = answer(path) ?? (await fetchTransport.postJson(url, body, signal));
      calls.push({ path, status: res.status });
      return res;
    },
  };
}

/** A picked file whose bytes from `readable` on went away (changed or deleted on disk after it was picked). */
function goneAfter(file: File, readable: number): File {
  class Gone extends File {
    override slice(start = 0, end?: number, type?: string): Blob {
      const real = super.slice(start, end, type);
      if (start < readable) return real;
      const unreadable = () => new DOMException('The requested file could not be read', 'NotReadableError');
      return {
        size: real.size,
        type: real.type,
        slice: () => real,
        arrayBuffer: () => Promise.reject(unreadable()),
        stream: () => new ReadableStream({ pull: (c) => c.error(unreadable()) }),
      } as unknown as Blob;
    }
  }
  return new Gone([file], file.name, { type: file.type, lastModified: file.lastModified });
}

const UNREADABLE = new FileUnreadable(null).message;

const filesOf = (h: Harness) => h.t.deps.db.selectFrom('files').select('actual_name').where('user_id', '=', h.user.id).execute();

describe.each(DIALECTS)('a finish cut short, and a cancel racing the finish, on %s', (dialect) => {
  let h: Harness;
  afterEach(async () => {
    await h?.close();
  });

  it('sends the last chunk again when status says every chunk is in but gives no link, and the file is listed once', async () => {
    h = await createHarness(dialect);
    const outage = failNextFinalize(h);
    const { queue, store } = await h.openTab();
    const file = textFile(CHUNK + 700, 'outage.txt');
    const [queued] = await queue.enqueue([file]);
    const done = await waitForState(queue, queued!.id, ['done', 'failed']);
    expect(outage.failed()).toBe(true);
    expect(done.state).toBe('done');
    // 503 retry:true on the first last chunk, then the same chunk whole again (finish-upload.ts).
    expect(h.proxy.uploads.map((u) => [u.fields.chunkIndex, u.status])).toEqual([
      ['0', 200],
      ['1', 503],
      ['1', 200],
    ]);
    expect((await filesOf(h)).map((f) => f.actual_name)).toEqual([done.url!.split('/').pop()]);
    expect((await download(h.t, done.url!)).equals(await bytesOf(file))).toBe(true);
    expect(await store.chunkIndexes(queued!.id)).toEqual([]);
  });

  it('keeps the last chunk in IndexedDB until the link arrives, so a reload after the failed finish still finishes it', async () => {
    h = await createHarness(dialect);
    failNextFinalize(h);
    // The first tab would retry only after a minute: it is closed (a reload) before that.
    const first = await h.openTab({ backoff: { baseMs: 60_000, maxMs: 60_000 }, random: () => 0.5 });
    const file = textFile(CHUNK * 2 + 300, 'reload.txt');
    const [queued] = await first.queue.enqueue([file]);
    await waitUntil(() => h.proxy.uploads.some((u) => u.status === 503));
    await waitUntil(async () => (await first.store.get(queued!.id))?.writeComplete === true);
    await first.queue.close();
    // Every chunk is at the server; only the last is still kept here.
    expect(await first.store.chunkIndexes(queued!.id)).toEqual([2]);

    const second = await h.openTab();
    const done = await waitForState(second.queue, queued!.id, ['done', 'failed']);
    expect(done.state).toBe('done');
    expect(h.proxy.uploads.map((u) => u.fields.chunkIndex)).toEqual(['0', '1', '2', '2']);
    expect((await filesOf(h)).map((f) => f.actual_name)).toEqual([done.url!.split('/').pop()]);
    expect((await download(h.t, done.url!)).equals(await bytesOf(file))).toBe(true);
    expect(await second.store.chunkIndexes(queued!.id)).toEqual([]);
  });

  it('a cancel that reaches the server while it lists the file deletes the file, then drops the row', async () => {
    h = await createHarness(dialect);
    const finish = holdFinalize(h);
    const transport = recording();
    const { queue, store } = await h.openTab({ transport, undoMs: 50 });
    const [queued] = await queue.enqueue([textFile(CHUNK + 700, 'private.txt')]);
    await waitUntil(finish.reached); // the bar is at 99 %: every byte is in, the server is listing it
    await queue.cancel(queued!.id);
    await waitUntil(() => transport.calls.some((c) => c.path === '/api/v1/files/upload/cancel'));
    expect(transport.calls.find((c) => c.path === '/api/v1/files/upload/cancel')!.status).toBe(409);
    finish.release();
    await waitUntil(async () => (await store.get(queued!.id)) === undefined);
    expect(finish.done()).toBe(true);
    expect(transport.calls.filter((c) => c.path === '/api/v1/files/delete').map((c) => c.status)).toEqual([200]);
    expect(await filesOf(h)).toEqual([]);
    expect(await queue.list()).toEqual([]);
  });

  it('a cancel too late whose delete is refused shows the upload done, with its link and why', async () => {
    h = await createHarness(dialect);
    const finish = holdFinalize(h);
    const transport = recording((path) =>
      path === '/api/v1/files/delete' ? { status: 403, body: { success: false, error: 'Deleting files is switched off.' }, retryAfter: null } : undefined,
    );
    const { queue } = await h.openTab({ transport, undoMs: 50 });
    const [queued] = await queue.enqueue([textFile(CHUNK + 700, 'kept.txt')]);
    await waitUntil(finish.reached);
    await queue.cancel(queued!.id);
    await waitUntil(() => transport.calls.some((c) => c.path === '/api/v1/files/upload/cancel'));
    finish.release();
    const done = await waitForState(queue, queued!.id, ['done']);
    expect(done.notice).toBe(CANCELLED_TOO_LATE);
    expect((await filesOf(h)).map((f) => f.actual_name)).toEqual([done.url!.split('/').pop()]);
  });

  it("shows the server's reason while it retries (uploads switched off), and drops it once a chunk is accepted", async () => {
    h = await createHarness(dialect);
    await h.t.deps.settings.set('allow_uploading', false);
    const { queue } = await h.openTab();
    const [queued] = await queue.enqueue([textFile(CHUNK * 2 + 10, 'later.txt')]);
    const reasonOf = async () => (await queue.list()).find((i) => i.id === queued!.id);
    await waitUntil(async () => (await reasonOf())?.notice === 'Uploading is currently disabled.');
    // Retried, not failed: 'preparing' while the copy into IndexedDB still runs (a busy machine).
    expect(['uploading', 'preparing']).toContain((await reasonOf())?.state);
    // Held still while the proxy is told what the next two requests meet: a retry sent meanwhile
    // would take one of those rules.
    await queue.pause(queued!.id);
    await waitUntil(async () => (await reasonOf())?.state === 'paused');
    // Switched on again: chunk 0 goes through and chunk 1 stalls midway, the reason already gone.
    h.proxy.cutNextUpload(Infinity);
    h.proxy.stallNextUpload(100);
    await h.t.deps.settings.set('allow_uploading', true);
    await queue.resume(queued!.id);
    await waitUntil(async () => (await reasonOf())!.ackedBytes >= CHUNK);
    await waitUntil(async () => (await reasonOf())!.notice === undefined);
    // Chunk 1 is on the wire, held: released before it got there, it would hang for good.
    await waitUntil(() => h.proxy.stalledRequests > 0);
    h.proxy.releaseStalled();
    const done = await waitForState(queue, queued!.id, ['done', 'failed']);
    expect(done.state).toBe('done');
    expect(done.notice).toBeUndefined();
  });

  it('says "Waiting for the server to finish the file" while another request lists it, never the server missing part of it', async () => {
    h = await createHarness(dialect);
    const finish = holdFinalize(h);
    const { queue } = await h.openTab();
    const [queued] = await queue.enqueue([textFile(CHUNK + 5, 'slow.txt')]);
    await waitUntil(finish.reached);
    // The client gave up on its last request (a dropped connection) while the server lists the file.
    await queue.pause(queued!.id);
    await queue.resume(queued!.id);
    await waitUntil(async () => (await queue.list()).find((i) => i.id === queued!.id)?.notice === 'Waiting for the server to finish the file');
    // Status asked while the finish commits is told the file, not "nothing received" (status-during-finish.test.ts).
    finish.release();
    const done = await waitForState(queue, queued!.id, ['done', 'failed']);
    expect(done.state).toBe('done');
    expect(await filesOf(h)).toHaveLength(1);
  });

  it('fails a picked file that can no longer be read, asking for it again, instead of "storage is short"', async () => {
    h = await createHarness(dialect);
    const { queue } = await h.openTab();
    const [queued] = await queue.enqueue([goneAfter(textFile(CHUNK * 2 + 10, 'gone.txt'), CHUNK)]);
    const failed = await waitForState(queue, queued!.id, ['failed', 'done']);
    expect(failed).toMatchObject({ state: 'failed', error: UNREADABLE, persistent: true });
    expect(await filesOf(h)).toEqual([]);
  });

  it('fails an upload sent from memory whose file can no longer be read, instead of retrying it for ever', async () => {
    h = await createHarness(dialect);
    const { queue } = await h.openTab({ storage: fixedStorage(1024 * 1024, 1000 * 1024) });
    const [queued] = await queue.enqueue([goneAfter(textFile(CHUNK * 2 + 10, 'gone.txt'), CHUNK)]);
    expect(queued?.persistent).toBe(false);
    const failed = await waitForState(queue, queued!.id, ['failed', 'done']);
    expect(failed).toMatchObject({ state: 'failed', error: UNREADABLE, persistent: false });
  });
});
