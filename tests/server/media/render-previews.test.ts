import sharp from 'sharp';
import { afterEach, describe, expect, it } from 'vitest';
import { MetadataPool, OUT_OF_TIME, PREVIEW_LIMITS } from '../../../server/modules/media/metadata-pool.ts';
import { pngBomb } from '../files/fixtures/hostile.ts';

/** The previews reader (render-previews.ts in its own process), as the preview queue runs it. */
describe('previews reader (server/modules/media/render-previews.ts)', () => {
  let pool: MetadataPool | null = null;
  afterEach(async () => {
    await pool?.close();
    pool = null;
  });

  /** Renders `file` through range reads, counting the bytes asked for. */
  async function render(file: Buffer) {
    pool ??= new MetadataPool(PREVIEW_LIMITS);
    let asked = 0;
    const previews = await pool.previews(file.length, async (start, end) => {
      asked += end - start;
      return file.subarray(start, end);
    });
    if (previews === OUT_OF_TIME) throw new Error('the reader ran out of time');
    return { previews, asked };
  }

  it('refuses a decompression bomb from its header without reading the rest of a large file', async () => {
    // 100,000 × 100,000 px in the first bytes, then 60 MiB: sharp read a stream whole before its
    // header, so every byte crossed from the store to the reader and was held twice.
    const bomb = Buffer.concat([pngBomb(100_000, 100_000), Buffer.alloc(60 * 1024 * 1024, 7)]);
    const { previews, asked } = await render(bomb);
    expect(asked).toBeLessThanOrEqual(1024 * 1024);
    expect(previews).toEqual([]);
  });

  it('still reads the whole of an image the head says nothing about, and of one within the limit', async () => {
    // A TIFF written with its directory after the pixels: the first MiB tells no size.
    const tiff = await sharp({ create: { width: 1200, height: 800, channels: 3, background: 'black', noise: { type: 'gaussian', mean: 128, sigma: 40 } } })
      .tiff({ compression: 'none' })
      .toBuffer();
    expect(tiff.length).toBeGreaterThan(2 * 1024 * 1024);
    const fromTiff = await render(tiff);
    expect(fromTiff.previews?.map((p) => [p.width, p.height])).toEqual([
      [160, 107],
      [320, 214],
      [640, 427],
    ]);
    expect(fromTiff.asked).toBe(tiff.length);
    const png = await sharp({ create: { width: 900, height: 300, channels: 3, background: 'black', noise: { type: 'gaussian', mean: 128, sigma: 40 } } }).png({ compressionLevel: 0 }).toBuffer();
    const fromPng = await render(png);
    expect(fromPng.previews?.map((p) => p.width)).toEqual([160, 320, 640]);
    expect(fromPng.asked).toBe(png.length);
  });
});
