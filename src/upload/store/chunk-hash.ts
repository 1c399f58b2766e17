export async function sha256Hex(data: BufferSource): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', data));
  let hex = '';
  for (const byte of digest) hex += byte.toString(16).padStart(2, '0');
  return hex;
}

/**
 * Chunks held in memory at once in one context (the upload worker, the service worker), across
 * every copy and sender hashing there. Each holds a whole chunk, 80 MB: ten videos shared at once
 * had ten copies each keeping its own buffer for as long as it ran, some 0.8 GB in a phone's
 * worker. Copies past this wait their turn to read; on a phone's few cores they hash no slower.
 */
export const CHUNKS_IN_MEMORY = 2;

/** How long buffers nobody uses are kept for the next chunk before they are let go. */
const IDLE_BUFFERS_MS = 10_000;

/**
 * The context's chunk buffers, lent out one per chunk being hashed and reused for the next (a
 * fresh 80 MB allocation per chunk cost Chromium more than reading into a kept one). Lent and
 * kept together never exceed CHUNKS_IN_MEMORY; kept ones go once the copies have been idle a while.
 */
class ChunkBuffers {
  private readonly kept: ArrayBuffer[] = [];
  private lent = 0;
  private readonly waiting: (() => void)[] = [];
  private dropKept: ReturnType<typeof setTimeout> | undefined;

  async take(size: number): Promise<ArrayBuffer> {
    while (this.lent >= CHUNKS_IN_MEMORY) await new Promise<void>((resolve) => this.waiting.push(resolve));
    this.lent++;
    clearTimeout(this.dropKept);
    const fits = this.kept.findIndex((b) => b.byteLength >= size);
    if (fits >= 0) return this.kept.splice(fits, 1)[0] as ArrayBuffer;
    // Too small for this chunk: let one go, so the count stays within bounds.
    this.kept.pop();
    return new ArrayBuffer(size);
  }

  give(buffer: ArrayBuffer): void {
    this.lent--;
    // One a failed read left detached (transferred to a stream) reads as empty: not kept.
    if (buffer.byteLength > 0) this.kept.push(buffer);
    this.waiting.shift()?.();
    if (this.lent === 0) this.dropKept = setTimeout(() => (this.kept.length = 0), IDLE_BUFFERS_MS);
  }
}

const buffers = new ChunkBuffers();

/**
 * SHA-256 of a chunk of a picked file, its bytes read through the Blob's byte stream into a
 * buffer the context's copies share and reuse (issue 9, ChunkBuffers). `Blob.arrayBuffer()` took
 * Chromium twice the CPU of this read (160 MiB in 80 MB slices: 1.0–1.9 s against 0.5–0.66 s)
 * and a fresh 80 MB allocation per chunk; bench/README.md has the figures.
 */
export class ChunkHasher {
  async hash(blob: Blob): Promise<string> {
    const size = blob.size;
    let buffer = await buffers.take(size);
    try {
      const read = await readInto(blob, buffer, size);
      // A BYOB read transfers the buffer it fills: the one it hands back is the one to reuse.
      buffer = read.buffer;
      if (read.filled !== size) throw new DOMException(`The file gave ${read.filled} of the chunk's ${size} bytes: it changed while it was read.`, 'NotReadableError');
      return await sha256Hex(new Uint8Array(buffer, 0, size));
    } finally {
      buffers.give(buffer);
    }
  }
}

/** Fills `buffer` from the start with the blob's bytes: the buffer that holds them, and how many there were. */
async function readInto(blob: Blob, buffer: ArrayBuffer, size: number): Promise<{ buffer: ArrayBuffer; filled: number }> {
  const stream = blob.stream();
  let byob: ReadableStreamBYOBReader;
  try {
    byob = stream.getReader({ mode: 'byob' });
  } catch {
    // A browser whose Blob stream is not a byte stream: its pieces are copied in.
    return { buffer, filled: await copyPieces(stream.getReader(), new Uint8Array(buffer), size) };
  }
  let into = buffer;
  let filled = 0;
  try {
    while (filled < size) {
      // The view's buffer is handed to the stream and comes back filled (transferred).
      const { done, value } = await byob.read(new Uint8Array(into, filled, size - filled));
      if (!value) {
        // Cancelled: the buffer went with the stream.
        into = new ArrayBuffer(buffer.byteLength);
        break;
      }
      into = value.buffer;
      filled += value.byteLength;
      if (done) break;
    }
  } finally {
    byob.releaseLock();
    await stream.cancel().catch(() => undefined);
  }
  return { buffer: into, filled };
}

async function copyPieces(reader: ReadableStreamDefaultReader<Uint8Array>, into: Uint8Array, size: number): Promise<number> {
  let filled = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return filled;
      if (filled + value.byteLength > size) return filled + value.byteLength;
      into.set(value, filled);
      filled += value.byteLength;
    }
  } finally {
    reader.releaseLock();
  }
}
