/// <reference types="node" />
import crypto from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { ChunkHasher } from '../../src/upload/store/chunk-hash.ts';

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
