import crypto from 'node:crypto';
import { Worker } from 'node:worker_threads';
import { describe, expect, it, vi } from 'vitest';
import { Readable } from 'node:stream';
import { OffThreadSha256, sha256OfStream } from '../../../server/lib/sha256-off-thread.ts';

const sha256 = (...parts: Uint8Array[]) => {
  const h = crypto.createHash('sha256');
  for (const p of parts) h.update(p);
  return h.digest('hex');
};

/**
 * Issue 9: the upload's SHA-256 is computed on a worker thread. Whatever the pieces, their sizes
 * and how many uploads hash at once, the digest must be the one the chunk's sender computed.
 */
describe('SHA-256 on a worker thread', () => {
  it('gives the same digest as hashing in place, for pieces of every size around its batches', async () => {
    const data = crypto.randomBytes(3 * 1024 * 1024 + 12_345);
    const sizes = [1, 7, 65_536, 262_143, 262_144, 262_145, 1_000_000];
    const hash = new OffThreadSha256();
    let at = 0;
    for (let i = 0; at < data.length; i++) {
      const piece = data.subarray(at, at + sizes[i % sizes.length]!);
      await hash.update(piece);
      at += piece.length;
    }
    expect(await hash.digest()).toBe(sha256(data));
  });

  it('copies each piece, so a buffer reused by its owner right after does not change the digest', async () => {
    const buf = Buffer.alloc(100_000, 1);
    const hash = new OffThreadSha256();
    await hash.update(buf);
    buf.fill(2);
    await hash.update(buf);
    expect(await hash.digest()).toBe(sha256(Buffer.alloc(100_000, 1), Buffer.alloc(100_000, 2)));
  });

  it('keeps many hashes apart while they run at once, and digests an empty one', async () => {
    const inputs = Array.from({ length: 12 }, (_, i) => crypto.randomBytes(200_000 + i * 50_001));
    const hashes = inputs.map(() => new OffThreadSha256());
    // Interleaved, as concurrent uploads feed them.
    for (let at = 0; at < 900_000; at += 64 * 1024) {
      for (const [i, h] of hashes.entries()) await h.update(inputs[i]!.subarray(at, at + 64 * 1024));
    }
    expect(await Promise.all(hashes.map((h) => h.digest()))).toEqual(inputs.map((d) => sha256(d)));
    expect(await new OffThreadSha256().digest()).toBe(sha256());
  });

  it('digests a small body in place, with no message to the worker, and a larger one on it', async () => {
    const posted = vi.spyOn(Worker.prototype, 'postMessage');
    try {
      for (const size of [0, 1024, 64 * 1024]) {
        const data = crypto.randomBytes(size);
        const hash = new OffThreadSha256();
        await hash.update(data);
        expect(await hash.digest()).toBe(sha256(data));
      }
      expect(posted).not.toHaveBeenCalled();
      const larger = crypto.randomBytes(64 * 1024 + 1);
      const hash = new OffThreadSha256();
      await hash.update(larger);
      expect(await hash.digest()).toBe(sha256(larger));
      expect(posted).toHaveBeenCalled();
    } finally {
      posted.mockRestore();
    }
  });

  it('makes a fast feeder wait for the hashing thread instead of queueing without bound', async () => {
    const hash = new OffThreadSha256();
    const piece = crypto.randomBytes(1024 * 1024);
    // Four MiB handed over at once is more than one hash may have queued: the caller is told to wait.
    const waits = [hash.update(piece), hash.update(piece), hash.update(piece), hash.update(piece)];
    expect(waits.some((w) => w instanceof Promise)).toBe(true);
    await Promise.all(waits);
    expect(await hash.digest()).toBe(sha256(piece, piece, piece, piece));
  });

  it('lets go of a hash that is not digested, and later hashes still work', async () => {
    const dropped = new OffThreadSha256();
    await dropped.update(crypto.randomBytes(300_000));
    dropped.dispose();
    const next = new OffThreadSha256();
    await next.update(Buffer.from('after'));
    expect(await next.digest()).toBe(sha256(Buffer.from('after')));
  });

  it('hashes a whole stream, and a stream that fails midway gives its error, not a digest', async () => {
    const data = crypto.randomBytes(2 * 1024 * 1024 + 3);
    expect(await sha256OfStream(Readable.from([data.subarray(0, 5), data.subarray(5)]))).toBe(sha256(data));
    async function* brokenOff() {
      yield data.subarray(0, 700_000);
      throw new Error('connection reset');
    }
    await expect(sha256OfStream(brokenOff())).rejects.toThrow('connection reset');
    expect(await sha256OfStream(Readable.from([Buffer.from('still fine')]))).toBe(sha256(Buffer.from('still fine')));
  });
});
