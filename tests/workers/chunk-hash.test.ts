/// <reference types="node" />
import crypto from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { CHUNKS_IN_MEMORY, ChunkHasher } from '../../src/upload/store/chunk-hash.ts';

const sha256 = (data: Uint8Array) => crypto.createHash('sha256').update(data).digest('hex');

/** A Blob whose stream is a plain (not byte) stream of `pieces`, as some browsers give. */
function plainStreamBlob(pieces: Uint8Array[], size = pieces.reduce((n, p) => n + p.length, 0)): Blob {
  return {
    size,
    stream: () =>
      new ReadableStream<Uint8Array>({
        start(controller) {
          for (const piece of pieces) controller.enqueue(piece);
          controller.close();
        },
      }),
  } as unknown as Blob; // Only `size` and `stream()` are read.
}

describe('ChunkHasher: the hash each chunk is sent with (design §9: chunkHash)', () => {
  it("gives every chunk its bytes' SHA-256 while one buffer serves smaller and larger chunks in turn", async () => {
    const hasher = new ChunkHasher();
    const file = new Blob([crypto.randomBytes(1_500_000)]);
    const whole = new Uint8Array(await file.arrayBuffer());
    // A full chunk, a smaller one in the same buffer, an empty one, then one larger than any before.
    for (const [start, end] of [
      [0, 300_000],
      [300_000, 370_001],
      [370_001, 370_001],
      [370_001, 1_500_000],
    ] as const) {
      expect(await hasher.hash(file.slice(start, end))).toBe(sha256(whole.subarray(start, end)));
    }
  });

  it('hashes a stream that is not a byte stream by copying its pieces in', async () => {
    const pieces = [crypto.randomBytes(10_000), crypto.randomBytes(1), crypto.randomBytes(65_536)];
    const joined = Buffer.concat(pieces);
    const hasher = new ChunkHasher();
    expect(await hasher.hash(plainStreamBlob(pieces))).toBe(sha256(joined));
    // The buffer the byte-stream path left is reused for the next chunk.
    expect(await hasher.hash(new Blob([joined.subarray(5)]))).toBe(sha256(joined.subarray(5)));
  });

  it('refuses a file that gave fewer or more bytes than its chunk holds (changed while read), never a wrong hash', async () => {
    const pieces = [crypto.randomBytes(1000)];
    await expect(new ChunkHasher().hash(plainStreamBlob(pieces, 1500))).rejects.toThrow('changed while it was read');
    await expect(new ChunkHasher().hash(plainStreamBlob(pieces, 600))).rejects.toThrow('changed while it was read');
  });
});

describe('ChunkHasher: chunks in memory at once', () => {
  it(`reads at most ${CHUNKS_IN_MEMORY} chunks into memory at once however many copies hash together, each hash still right`, async () => {
    // Ten files picked or shared at once start ten copies; each read holds a whole chunk (80 MB).
    let open = 0;
    let most = 0;
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const slowBlob = (bytes: Uint8Array): Blob =>
      ({
        size: bytes.length,
        stream: () => {
          open++;
          most = Math.max(most, open);
          return new ReadableStream<Uint8Array>({
            async start(controller) {
              await gate;
              controller.enqueue(bytes);
              controller.close();
              open--;
            },
          });
        },
      }) as unknown as Blob; // Only `size` and `stream()` are read.
    const files = Array.from({ length: 6 }, () => crypto.randomBytes(50_000));
    const hashes = Promise.all(files.map((bytes) => new ChunkHasher().hash(slowBlob(bytes))));
    // Every copy has asked; only the lent buffers' reads have begun.
    await expect.poll(() => open).toBe(CHUNKS_IN_MEMORY);
    release();
    expect(await hashes).toEqual(files.map(sha256));
    expect(most).toBe(CHUNKS_IN_MEMORY);
  });
});
