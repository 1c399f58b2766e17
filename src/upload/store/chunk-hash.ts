export async function sha256Hex(data: BufferSource): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', data));
  let hex = '';
  for (const byte of digest) hex += byte.toString(16).padStart(2, '0');
  return hex;
}

/**
 * SHA-256 of a chunk of a picked file, its bytes read through the Blob's byte stream into one
 * buffer that every chunk of a copy reuses (issue 9). `Blob.arrayBuffer()` took Chromium twice
 * the CPU of this read (160 MiB in 80 MB slices: 1.0–1.9 s against 0.5–0.66 s) and a fresh
 * 80 MB allocation per chunk; bench/README.md has the figures. One hasher serves one copy at a
 * time: two copies running at once each have their own.
 */
export class ChunkHasher {
  private buffer: ArrayBuffer | null = null;

  async hash(blob: Blob): Promise<string> {
    const size = blob.size;
    if (this.buffer === null || this.buffer.byteLength < size) this.buffer = new ArrayBuffer(size);
    const { buffer, filled } = await readInto(blob, this.buffer, size);
    // A BYOB read transfers the buffer it fills: the one it hands back is the one to reuse.
    this.buffer = buffer;
    if (filled !== size) throw new DOMException(`The file gave ${filled} of the chunk's ${size} bytes: it changed while it was read.`, 'NotReadableError');
    return sha256Hex(new Uint8Array(buffer, 0, size));
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
