import 'fake-indexeddb/auto';
import { afterEach, describe, expect, it } from 'vitest';
import { SourceLost, storeSource } from '../../src/upload/queue/chunk-source.ts';
import { UploadStore } from '../../src/upload/store/upload-store.ts';
import { newUploadRecord } from '../../src/upload/store/write-chunks.ts';
import { createLocks } from './helpers/fakes.ts';

const CHUNK = 4;

describe('reading a chunk from the IndexedDB copy (chunk-source.ts)', () => {
  let store: UploadStore | undefined;
  afterEach(() => store?.close());

  it('returns a chunk the copy stored and counted between its two reads, instead of calling the copy incomplete', async () => {
    store = await UploadStore.open(`stash-uploads-${crypto.randomUUID()}`);
    const file = new File(['abcdefgh'], 'race.txt', { type: 'text/plain' });
    const record = { ...newUploadRecord(file, CHUNK, 'page', 'u1'), chunksWritten: 1 };
    await store.put(record);
    const data = file.slice(CHUNK);
    // The copy (another task) stores chunk 1 and counts it just after the reader looked for it.
    const real = store.getChunk.bind(store);
    let first = true;
    store.getChunk = async (id, index) => {
      const found = await real(id, index);
      if (first && index === 1) {
        first = false;
        await store!.putChunk({ uploadId: id, index, data, hash: 'h1' });
        await store!.update(id, (r) => ({ ...r, chunksWritten: 2, writeComplete: true }));
      }
      return found;
    };
    const source = storeSource(store, record.id, createLocks(), () => new Promise(() => {}));
    const chunk = await source.read(1, new AbortController().signal);
    expect(chunk.hash).toBe('h1');
    expect(await chunk.data.text()).toBe('efgh');
  });

  it('still says the copy is incomplete when a counted chunk is really gone', async () => {
    store = await UploadStore.open(`stash-uploads-${crypto.randomUUID()}`);
    const file = new File(['abcdefgh'], 'gone.txt', { type: 'text/plain' });
    const record = { ...newUploadRecord(file, CHUNK, 'page', 'u1'), chunksWritten: 2, writeComplete: true };
    await store.put(record);
    const source = storeSource(store, record.id, createLocks(), () => new Promise(() => {}));
    await expect(source.read(1, new AbortController().signal)).rejects.toBeInstanceOf(SourceLost);
  });
});
