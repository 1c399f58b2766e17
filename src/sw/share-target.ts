import { UploadStore } from '../upload/store/upload-store.ts';
import type { UploadRecord } from '../upload/store/schema.ts';
import { chunkOf, newUploadRecord } from '../upload/store/write-chunks.ts';
import { ChunkHasher } from '../upload/store/chunk-hash.ts';
import { fingerprintOf } from '../upload/store/fingerprint.ts';
import { writeLockName, writerAlive } from '../upload/queue/chunk-source.ts';
import type { LockManagerLike } from '../upload/queue/environment.ts';
import { CHUNK_SIZE } from '../../contract/upload-fields.ts';
import { SHARE_FAILED_REDIRECT, SHARE_NONE_REDIRECT, SHARED_REDIRECT } from '../../contract/site-routes.ts';

/**
 * Issue 5: every shared file is in the IndexedDB queue before the answer goes out, so nothing
 * is lost if the page never opens; the page's upload worker (or Background Sync) sends it.
 * The answer is a 303, so a reload of the dashboard does not post the files again.
 *
 * A share is all or nothing (src/sw/README.md, "Share to Stash"): the chunks of every file are
 * stored first, under each upload's write lock, and the uploads are queued together once all
 * are. Storage running out on any file drops what this share stored, and the page says the
 * files could not be saved: nothing of it was queued or sent, so picking them again uploads each
 * once. A share that brought no file says so rather than pointing at an empty list.
 */
export async function acceptShare(request: Request, notifyChanged: () => void): Promise<Response> {
  const redirect = (to: string) => Response.redirect(new URL(to, self.location.origin).href, 303);
  let store: UploadStore | null = null;
  try {
    const form = await request.formData();
    const files = form.getAll('file').filter((value): value is File => typeof value !== 'string' && !isEmptyField(value));
    if (files.length === 0) return redirect(SHARE_NONE_REDIRECT);
    const locks: LockManagerLike = navigator.locks;
    store = await UploadStore.open();
    await dropAbandonedChunks(store, locks);
    const auth = await store.getAuth();
    const chunkSize = auth?.chunkSize ?? CHUNK_SIZE;
    // Issue 11 item 1: a share belongs to whoever is signed in (signed out: to the next to sign in).
    const owner = auth?.token ? (auth.owner ?? undefined) : undefined;
    const records: UploadRecord[] = [];
    for (const file of files) records.push({ ...newUploadRecord(file, chunkSize, 'share', owner), ...(await fingerprintOf(file)) });
    await underWriteLocks(
      locks,
      records.map((r) => r.id),
      () => storeAll(store!, records, files),
    );
    notifyChanged();
    return redirect(SHARED_REDIRECT);
  } catch {
    // Quota or a broken form: the page says so, the user can still pick the files.
    return redirect(SHARE_FAILED_REDIRECT);
  } finally {
    store?.close();
  }
}

/** What a form's file input sends when no file was chosen: a part with no name and no bytes. */
function isEmptyField(file: File): boolean {
  return file.name === '' && file.size === 0;
}

/** Stores every file's chunks, then queues them all at once; on any failure drops what it stored. */
async function storeAll(store: UploadStore, records: UploadRecord[], files: File[]): Promise<void> {
  try {
    for (const [i, record] of records.entries()) await storeChunks(store, record, files[i]!);
    await store.putAll(records.map((r) => ({ ...r, chunksWritten: r.totalChunks, writeComplete: true })));
  } catch (error) {
    for (const record of records) await store.remove(record.id).catch(() => undefined);
    throw error;
  }
}

/**
 * Each chunk of `file`, hashed, stored for an upload whose record is not queued yet (so no sender
 * sees it): the one read of the bytes, as in writeFileChunks. An empty file is one empty chunk.
 */
async function storeChunks(store: UploadStore, record: UploadRecord, file: Blob): Promise<void> {
  const hasher = new ChunkHasher();
  for (let index = 0; index < record.totalChunks; index++) {
    const data = chunkOf(file, index, record.chunkSize);
    await store.putChunk({ uploadId: record.id, index, data, hash: await hasher.hash(data) });
  }
}

/**
 * Held for the whole share: chunks with no record whose write lock is free were left by a share
 * the browser stopped midway (dropAbandonedChunks); these are still being written.
 */
function underWriteLocks(locks: LockManagerLike, ids: string[], run: () => Promise<void>): Promise<void> {
  const [first, ...rest] = ids;
  if (first === undefined) return run();
  return locks.request(writeLockName(first), {}, () => underWriteLocks(locks, rest, run));
}

/**
 * A share cut off before its files were queued (the service worker stopped) leaves chunks no
 * upload owns and nobody writes; nothing else would ever remove them.
 */
async function dropAbandonedChunks(store: UploadStore, locks: LockManagerLike): Promise<void> {
  const queued = new Set((await store.list()).map((r) => r.id));
  for (const id of await store.chunkOwners()) {
    if (queued.has(id) || (await writerAlive(locks, id))) continue;
    // Queued meanwhile by a page copy (LocalCopy writes the record before any chunk)? Keep it.
    if (await store.get(id)) continue;
    await store.removeChunks(id);
  }
}
