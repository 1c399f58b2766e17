import type { UploadStore } from './upload-store.ts';
import type { UploadRecord } from './schema.ts';
import { ChunkHasher } from './chunk-hash.ts';

/**
 * The picked File could not be read any more (NotReadableError, NotFoundError: changed, moved or
 * deleted on disk after it was picked, a revoked content URI). Not a storage failure: sending it
 * from memory would fail the same way, so the upload fails and asks for the file again.
 */
export class FileUnreadable extends Error {
  constructor(override readonly cause: unknown) {
    super('This file can no longer be read: it was changed, moved or deleted after you picked it. Please choose the file again.');
  }
}

export function totalChunksFor(size: number, chunkSize: number): number {
  // An empty file is still one (empty) chunk, so the protocol has something to send.
  return Math.max(1, Math.ceil(size / chunkSize));
}

export function newUploadRecord(
  file: Blob & { name: string },
  chunkSize: number,
  source: UploadRecord['source'],
  owner: string | undefined,
  id: string = crypto.randomUUID(),
): UploadRecord {
  return {
    id,
    ...(owner !== undefined ? { owner } : {}),
    name: file.name,
    size: file.size,
    type: file.type,
    createdAt: Date.now(),
    chunkSize,
    totalChunks: totalChunksFor(file.size, chunkSize),
    chunksWritten: 0,
    writeComplete: false,
    state: 'waiting',
    ackedBytes: 0,
    source,
  };
}

/** Chunk `index` of `file` (design §9: every chunk but the last is `chunkSize` bytes). */
export function chunkOf(file: Blob, index: number, chunkSize: number): Blob {
  const start = index * chunkSize;
  return file.slice(start, Math.min(file.size, start + chunkSize));
}

/**
 * Copies a file into IndexedDB one protocol chunk at a time, hashing each, and records progress
 * after every chunk so a sender can start on chunk 0 while the rest is still being written
 * (issue 5). `onHashed` hears each chunk's hash before it is stored, so a sender in the same
 * context can send that chunk from the File meanwhile (issue 9). A chunk the server already
 * acknowledged is not stored at all, but for the last until the upload is done (sending it again
 * takes up a finish cut short). Throws the storage error (e.g. QuotaExceededError) so the
 * caller can fall back, or FileUnreadable when the File itself cannot be read. Stops early, without error, if the upload was cancelled meanwhile.
 */
export async function writeFileChunks(
  store: UploadStore,
  record: UploadRecord,
  file: Blob,
  onChunk?: (index: number) => void,
  onHashed?: (index: number, hash: string) => void,
): Promise<void> {
  const hasher = new ChunkHasher();
  for (let index = record.chunksWritten; index < record.totalChunks; index++) {
    const data = chunkOf(file, index, record.chunkSize);
    const end = index * record.chunkSize + data.size;
    // The bytes come into memory once, to be hashed, and are dropped; the store copies the
    // slice itself. A file changed on disk meanwhile fails the server's checksum, never silently.
    const hash = await hasher.hash(data).catch((error: unknown) => {
      throw new FileUnreadable(error);
    });
    onHashed?.(index, hash);
    const current = await store.get(record.id);
    if (!current) return;
    const last = index === record.totalChunks - 1;
    // The last chunk is kept until the link arrives: a finish cut short is taken up by sending it again.
    if (current.ackedBytes < end || end === 0 || (last && current.state !== 'done')) await store.putChunk({ uploadId: record.id, index, data, hash });
    const updated = await store.update(record.id, (r) => ({ ...r, chunksWritten: index + 1, writeComplete: last }));
    if (!updated) {
      await store.deleteChunk(record.id, index);
      return;
    }
    onChunk?.(index);
  }
}
