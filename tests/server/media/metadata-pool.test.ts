import { afterEach, describe, expect, it } from 'vitest';
import { DEFAULT_METADATA_LIMITS, MetadataPool } from '../../../server/modules/media/metadata-pool.ts';
import { mp4Bytes } from '../files/fixtures/mp4.ts';
import { mp4WithSampleCount } from '../files/fixtures/hostile.ts';

/** Issue 8 item 1: the readers of uploaded bytes, bounded in memory and time, outside the server's process. */
describe('MetadataPool (server/modules/media/metadata-pool.ts)', () => {
  let pool: MetadataPool | null = null;
  afterEach(async () => pool?.close());
  const noReads = () => Promise.resolve(Buffer.alloc(0));

  it('survives a reader killed by a crafted MP4 (2^32-1 samples): that read answers null, the next one works', async () => {
    pool = new MetadataPool();
    const hostile = mp4WithSampleCount(0xffffffff);
    expect(await pool.videoSize('video/mp4', hostile, hostile.length, noReads)).toBeNull();
    const fine = mp4Bytes({ video: [{ width: 640, height: 360 }], mdatBytes: 64 });
    expect(await pool.kind(fine, fine.length)).toMatchObject({ mime: 'video/mp4' });
    expect(await pool.videoSize('video/mp4', fine, fine.length, noReads)).toEqual({ width: 640, height: 360 });
  });

  it('ends a task past its busy time, but does not count the time spent waiting for range reads', async () => {
    // One reader and a tight budget, measured against a parse that takes ~100 ms (3,000,000 fixed-size samples).
    pool = new MetadataPool({ ...DEFAULT_METADATA_LIMITS, workers: 1, busyMs: 30 });
    const slow = mp4WithSampleCount(3_000_000);
    const warm = mp4Bytes({ video: [{ width: 16, height: 16 }], mdatBytes: 8 });
    await pool.kind(warm, warm.length);
    expect(await pool.videoSize('video/mp4', slow, slow.length, noReads)).toBeNull();

    // A moov past the head, from a store taking 1.5 s per read: past a 1 s budget in all, still answered.
    await pool.close();
    pool = new MetadataPool({ ...DEFAULT_METADATA_LIMITS, workers: 1, busyMs: 1_000 });
    const file = mp4Bytes({ video: [{ width: 1280, height: 720 }], mdatBytes: 400 * 1024, moovAtEnd: true });
    const head = file.subarray(0, 256 * 1024);
    await pool.kind(warm, warm.length);
    const slowStore = async (start: number, end: number) => {
      await new Promise((r) => setTimeout(r, 1_500));
      return file.subarray(start, end);
    };
    expect(await pool.videoSize('video/mp4', head, file.length, slowStore)).toEqual({ width: 1280, height: 720 });
  });
});
