/// <reference types="node" />
import 'fake-indexeddb/auto';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { acceptShare } from '../../src/sw/share-target.ts';
import { UploadStore } from '../../src/upload/store/upload-store.ts';
import type { ChunkRecord } from '../../src/upload/store/schema.ts';
import { writeLockName } from '../../src/upload/queue/chunk-source.ts';
import type { LockManagerLike } from '../../src/upload/queue/environment.ts';
import type { HttpAnswer, MultipartRequest, Transport } from '../../src/upload/queue/transport.ts';
import { UploadQueue } from '../../src/upload/queue/upload-queue.ts';
import { createChannelHub, createLocks, createNetwork } from './helpers/fakes.ts';

/**
 * The Web Share Target (src/sw/share-target.ts, issue 5) over fake-indexeddb, with a tab's queue
 * (a fake API behind it) where a test needs one: a share is queued whole or not at all.
 */

const ORIGIN = 'http://site.test';
const AUTH = { apiUrl: 'http://api.test', token: 'tok', owner: 'user-1', alias: null };
const CHUNK = 1000;

function fileOf(size: number, name: string, seed = 1): File {
  const bytes = new Uint8Array(size);
  for (let i = 0; i < size; i++) bytes[i] = 97 + ((i * 7 + seed) % 26);
  return new File([bytes], name, { type: 'image/jpeg', lastModified: 1000 });
}

function share(form: FormData): Promise<Response> {
  return acceptShare(new Request(`${ORIGIN}/share-target`, { method: 'POST', body: form }), () => changes.post());
}

function formOf(...files: File[]): FormData {
  const form = new FormData();
  for (const file of files) form.append('file', file);
  return form;
}

/** Stores chunks as usual, but lets `act` see (or refuse) each chunk's upload, in the order first stored. */
function onPutChunk(act: (chunk: ChunkRecord, nth: number) => Promise<void>): void {
  const ids: string[] = [];
  const putChunk = UploadStore.prototype.putChunk;
  vi.spyOn(UploadStore.prototype, 'putChunk').mockImplementation(async function (this: UploadStore, chunk) {
    if (!ids.includes(chunk.uploadId)) ids.push(chunk.uploadId);
    await act(chunk, ids.indexOf(chunk.uploadId));
    return putChunk.call(this, chunk);
  });
}

/** The API's chunk protocol (design §7), enough for the queue: every chunk received once, then the link. */
class FakeApi implements Transport {
  readonly received = new Map<string, number[]>();
  readonly listed = new Map<string, string>();
  requests = 0;

  async postJson(url: string, body: unknown): Promise<HttpAnswer> {
    this.requests += 1;
    const { uploadId } = body as { uploadId: string };
    const url_ = this.listed.get(uploadId);
    if (url_) return { status: 200, body: { success: true, url: url_, received: [], partial: null }, retryAfter: null };
    const got = this.received.get(uploadId);
    if (!got) return { status: 404, body: { success: false, error: 'No unfinished upload with this uploadId.' }, retryAfter: null };
    return { status: 200, body: { success: true, received: got, partial: null }, retryAfter: null };
  }

  async postMultipart(req: MultipartRequest): Promise<HttpAnswer> {
    this.requests += 1;
    const fields = Object.fromEntries(req.fields);
    const id = fields.uploadId!;
    const got = this.received.get(id) ?? [];
    got.push(Number(fields.chunkIndex));
    this.received.set(id, got);
    if (new Set(got).size < Number(fields.totalChunks)) return { status: 200, body: { success: true, received: [...new Set(got)] }, retryAfter: null };
    this.listed.set(id, `http://files.test/${id.slice(0, 6)}.jpg`);
    return { status: 200, body: { success: true, url: this.listed.get(id), file: {} }, retryAfter: null };
  }
}

let locks: LockManagerLike;
let hub: ReturnType<typeof createChannelHub>;
let changes: ReturnType<ReturnType<typeof createChannelHub>>;
let store: UploadStore;
const queues: UploadQueue[] = [];

beforeEach(async () => {
  locks = createLocks();
  hub = createChannelHub();
  changes = hub();
  // What the service worker has: its origin and Web Locks shared with the app's tabs.
  vi.stubGlobal('self', { location: { origin: ORIGIN } });
  const request = (name: string, options: unknown, callback?: unknown) =>
    typeof options === 'function'
      ? locks.request(name, {}, options as (lock: unknown) => Promise<unknown>)
      : locks.request(name, options as { ifAvailable?: boolean }, callback as (lock: unknown) => Promise<unknown>);
  // navigator.locks.request takes (name, callback) as well as (name, options, callback).
  vi.stubGlobal('navigator', { locks: { request } });
  store = await UploadStore.open();
  for (const r of await store.list()) await store.remove(r.id);
  for (const id of await store.chunkOwners()) await store.removeChunks(id);
  // Signed in: a share belongs to the user the page last named.
  await store.setAuth({ apiUrl: AUTH.apiUrl, token: AUTH.token, owner: AUTH.owner, chunkSize: CHUNK });
});

afterEach(async () => {
  vi.restoreAllMocks();
  await Promise.all(queues.splice(0).map((q) => q.close()));
  store.close();
  vi.unstubAllGlobals();
});

/** A tab of the app: its queue over the same IndexedDB, locks and broadcast channel. */
async function openTab(api: Transport) {
  const tabStore = await UploadStore.open();
  let looks = 0;
  const list = tabStore.list.bind(tabStore);
  tabStore.list = () => {
    looks += 1;
    return list();
  };
  const queue = new UploadQueue({ store: tabStore, transport: api, locks, network: createNetwork(true), channel: hub(), auth: async () => AUTH, chunkSize: CHUNK, pollMs: 20 });
  queue.start();
  queues.push(queue);
  const close = queue.close.bind(queue);
  queue.close = async () => {
    await close();
    tabStore.close();
  };
  return { queue, looks: () => looks };
}

describe('share target', () => {
  it('storage running out on the second file queues none of the share and keeps none of its chunks', async () => {
    onPutChunk(async (_chunk, nth) => {
      if (nth === 1) throw new DOMException('Quota exceeded', 'QuotaExceededError');
    });
    const response = await share(formOf(fileOf(2500, 'first.jpg', 1), fileOf(2500, 'second.jpg', 2), fileOf(500, 'third.jpg', 3)));
    // The page says the files could not be saved and to pick them again: then nothing of them
    // may be queued (picked again, the first would go twice) or half written ("interrupted").
    expect(response.headers.get('location')).toBe(`${ORIGIN}/dashboard?shared=failed`);
    expect(await store.list()).toEqual([]);
    expect(await store.chunkOwners()).toEqual([]);
  });

  it('an open tab neither shows nor sends any file of a share still being saved; once saved, it sends them all', async () => {
    const api = new FakeApi();
    const tab = await openTab(api);
    let shownWhileSaving: string[] | null = null;
    let sentWhileSaving = -1;
    onPutChunk(async (chunk, nth) => {
      if (nth !== 1 || chunk.index !== 0 || shownWhileSaving) return;
      // The first file is stored whole; the second is not yet. Let the tab look a few times.
      const looked = tab.looks();
      await vi.waitFor(() => expect(tab.looks()).toBeGreaterThanOrEqual(looked + 5), { timeout: 10_000 });
      shownWhileSaving = (await tab.queue.list()).map((i) => `${i.name}:${i.state}`);
      sentWhileSaving = api.requests;
    });
    const response = await share(formOf(fileOf(2500, 'first.jpg', 1), fileOf(1500, 'second.jpg', 2), fileOf(0, 'empty.jpg', 3)));
    expect(response.status).toBe(303);
    expect(response.headers.get('location')).toBe(`${ORIGIN}/dashboard?shared=1`);
    expect(shownWhileSaving).toEqual([]);
    expect(sentWhileSaving).toBe(0);
    const whole = { writeComplete: true, owner: 'user-1', source: 'share' };
    const queued = await store.list();
    expect(queued).toHaveLength(3);
    expect(queued).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ ...whole, name: 'first.jpg', totalChunks: 3, chunksWritten: 3 }),
        expect.objectContaining({ ...whole, name: 'second.jpg', totalChunks: 2, chunksWritten: 2 }),
        expect.objectContaining({ ...whole, name: 'empty.jpg', totalChunks: 1, chunksWritten: 1 }),
      ]),
    );
    await vi.waitFor(async () => expect((await tab.queue.list()).map((i) => `${i.name}:${i.state}`).sort()).toEqual(['empty.jpg:done', 'first.jpg:done', 'second.jpg:done']), {
      timeout: 10_000,
    });
    // Each chunk reached the server once.
    expect([...api.received.values()].map((got) => got.join()).sort()).toEqual(['0', '0,1', '0,1,2']);
  });

  it('a share with no file queues nothing and does not claim files were added', async () => {
    const form = new FormData();
    form.append('text', 'https://example.com/just-a-link');
    const response = await share(form);
    expect(response.headers.get('location')).toBe(`${ORIGIN}/dashboard?shared=none`);
    // A form's file input left empty sends a part with no name and no bytes: no file either.
    const empty = new FormData();
    empty.append('file', new File([], ''));
    expect((await share(empty)).headers.get('location')).toBe(`${ORIGIN}/dashboard?shared=none`);
    expect(await store.list()).toEqual([]);
  });

  it('drops chunks a share cut off midway left behind, and keeps those a share still writes', async () => {
    const hash = 'x'.repeat(64);
    // The service worker was stopped mid-share: chunks stored, no upload queued, nobody writing.
    await store.putChunk({ uploadId: 'cut-off', index: 0, data: new Blob(['abc']), hash });
    // Another share is writing right now: it holds its upload's write lock.
    let releaseWriter!: () => void;
    const writing = new Promise<void>((resolve) => (releaseWriter = resolve));
    let writerHolds = false;
    const writer = locks.request(writeLockName('being-written'), {}, async () => {
      writerHolds = true;
      await writing;
    });
    await vi.waitFor(() => expect(writerHolds).toBe(true));
    await store.putChunk({ uploadId: 'being-written', index: 0, data: new Blob(['def']), hash });

    const response = await share(formOf(fileOf(1500, 'next.jpg')));
    expect(response.headers.get('location')).toBe(`${ORIGIN}/dashboard?shared=1`);
    const [queued] = await store.list();
    expect((await store.chunkOwners()).sort()).toEqual(['being-written', queued!.id].sort());
    releaseWriter();
    await writer;
  });
});
