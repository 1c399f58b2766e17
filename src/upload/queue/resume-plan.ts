/** `files/upload/status` (design §7), or nothing when the server has never seen the upload. */
export interface ServerProgress {
  received: number[];
  partial: { chunkIndex: number; bytes: number } | null;
  /** Finished already: the link its last chunk's lost answer carried (design §7 status). */
  url?: string;
}

export const NOTHING_RECEIVED: ServerProgress = { received: [], partial: null };

export interface ChunkStep {
  index: number;
  /** Where to start inside the chunk (design §7 chunkOffset): the server already holds the bytes before. */
  offset: number;
}

export function chunkLength(index: number, size: number, chunkSize: number): number {
  return Math.max(0, Math.min(chunkSize, size - index * chunkSize));
}

/**
 * Which chunks to send, in order, and from where: everything the server lacks, and for a chunk
 * cut off midway only the rest of it.
 */
export function planResume(totalChunks: number, size: number, chunkSize: number, progress: ServerProgress): ChunkStep[] {
  const received = new Set(progress.received);
  const steps: ChunkStep[] = [];
  for (let index = 0; index < totalChunks; index++) {
    if (received.has(index)) continue;
    const partial = progress.partial;
    const length = chunkLength(index, size, chunkSize);
    const offset = partial && partial.chunkIndex === index && partial.bytes > 0 && partial.bytes <= length ? partial.bytes : 0;
    steps.push({ index, offset });
  }
  return steps;
}

/** Bytes the server holds, for progress that only ever counts acknowledged bytes (issue 5). */
export function acknowledgedBytes(totalChunks: number, size: number, chunkSize: number, progress: ServerProgress): number {
  let bytes = 0;
  for (const index of new Set(progress.received)) {
    if (index >= 0 && index < totalChunks) bytes += chunkLength(index, size, chunkSize);
  }
  for (const step of planResume(totalChunks, size, chunkSize, progress)) bytes += step.offset;
  return bytes;
}
