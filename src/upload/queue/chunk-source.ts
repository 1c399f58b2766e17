import type { UploadStore } from '../store/upload-store.ts';
import { chunkOf, FileUnreadable } from '../store/write-chunks.ts';
import { ChunkHasher } from '../store/chunk-hash.ts';
import type { LockManagerLike } from './environment.ts';

export interface ChunkBytes {
  /** A handle on the chunk's bytes (in IndexedDB or the File), sent without reading it into memory. */
  data: Blob;
  hash: string;
}

/** Where a sender reads a chunk from: the IndexedDB copy, or the File itself (fallback). */
export interface ChunkSource {
  /** Resolves when the chunk is available; throws SourceLost when it never will be. */
  read(index: number, signal: AbortSignal): Promise<ChunkBytes>;
  /** The server holds this chunk: the local copy may go. */
  release(index: number): Promise<void>;
}

export class SourceLost extends Error {}
/** The page copying the file closed before the copy ended (issue 11 item 2): the file must be chosen again. */
export class CopyInterrupted extends SourceLost {}

export const writeLockName = (id: string) => `stash-upload-write:${id}`;

/** Whether some context is still copying this upload into IndexedDB (it holds the write lock). */
export function writerAlive(locks: LockManagerLike, id: string): Promise<boolean> {
  return locks.request(writeLockName(id), { ifAvailable: true }, async (lock) => lock === null);
}
/** Held while a context sends an upload, so a hand-over waits for the request in flight. */
export const sendLockName = (id: string) => `stash-upload-send:${id}`;

/**
 * Reads chunks from IndexedDB, waiting for a writer (possibly in another tab) that is still
 * copying the file; the writer holds a Web Lock, so a free lock means nobody will ever write
 * the missing chunk (the page that had the file closed mid-copy).
 */
export function storeSource(
  store: UploadStore,
  id: string,
  locks: LockManagerLike,
  waitForChange: (signal: AbortSignal) => Promise<void>,
  /** The chunk from a copy running in this context, before it is stored (LocalCopy.pending). */
  pending: (index: number) => ChunkBytes | undefined = () => undefined,
): ChunkSource {
  return {
    async read(index, signal) {
      for (;;) {
        signal.throwIfAborted();
        const early = pending(index);
        if (early) return early;
        const chunk = await store.getChunk(id, index);
        if (chunk) return { data: chunk.data instanceof Blob ? chunk.data : new Blob([chunk.data]), hash: chunk.hash };
        const record = await store.get(id);
        if (!record || record.detached) throw new DOMException('Upload removed or handed over', 'AbortError');
        if (record.chunksWritten > index) {
          // The writer may have hashed, stored and counted this very chunk between our two reads:
          // only a chunk still missing now was really lost.
          if (pending(index) || (await store.getChunk(id, index))) continue;
          throw new SourceLost('The saved copy of this file is incomplete and the server does not have it. Please choose the file again.');
        }
        if (!(await writerAlive(locks, id))) {
          // The writer may have finished this very chunk between our two reads.
          if (await store.getChunk(id, index)) continue;
          throw new CopyInterrupted('The app closed before the file was fully saved. Please choose the file again.');
        }
        await waitForChange(signal);
      }
    },
    async release(index) {
      await store.deleteChunk(id, index);
    },
  };
}

/** Straight from the File while the page stays open (issue 5: storage short or writes failing). */
export function fileSource(file: Blob, chunkSize: number): ChunkSource {
  const hashes = new Map<number, string>();
  return {
    async read(index) {
      const data = chunkOf(file, index, chunkSize);
      let hash = hashes.get(index);
      if (hash === undefined) {
        // A hasher of its own per read: this source lives as long as its upload, its buffer should not.
        hash = await new ChunkHasher().hash(data).catch((error: unknown) => {
          // Changed or deleted on disk since it was picked: no retry can read it (NotReadableError).
          throw new SourceLost(new FileUnreadable(error).message);
        });
        hashes.set(index, hash);
      }
      return { data, hash };
    },
    async release() {},
  };
}
