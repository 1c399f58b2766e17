import { Readable } from 'node:stream';
import type { ReadRange } from './metadata-pool.ts';
import { PREVIEW_MAX_ASPECT, PREVIEW_WIDTHS } from './previews.ts';

export interface RenderedPreview {
  width: number;
  height: number;
  data: Uint8Array;
}

/**
 * Decompression bombs stop here: sharp refuses an image whose header claims more pixels,
 * before decoding any. 100 Mpx (10,000 × 10,000) is above what phones save by default
 * (12-50 Mpx); larger images simply get no previews.
 */
export const LIMIT_INPUT_PIXELS = 100_000_000;
/** libvips' own stop for one image, on top of the pool's deadline. */
const SHARP_TIMEOUT_SECONDS = 20;
const READ_PIECE = 1024 * 1024;

/**
 * Runs in the reader process (metadata-worker.ts): streams the file in through `read`, decodes
 * it once (EXIF orientation applied, first frame of an animation), shrinks it to the widest
 * preview and encodes each width from that. Widths that would upscale collapse into one.
 */
export async function renderPreviews(size: number, read: ReadRange): Promise<RenderedPreview[]> {
  // Loaded here, not at the top: only the previews reader pays for libvips.
  const { default: sharp } = await import('sharp');
  sharp.concurrency(1);
  sharp.cache(false);
  const widest = PREVIEW_WIDTHS[PREVIEW_WIDTHS.length - 1] as number;
  const decoder = sharp({ limitInputPixels: LIMIT_INPUT_PIXELS, sequentialRead: true, failOn: 'error' })
    .timeout({ seconds: SHARP_TIMEOUT_SECONDS })
    .rotate()
    .resize({ width: widest, height: widest * PREVIEW_MAX_ASPECT, fit: 'inside', withoutEnlargement: true })
    .raw();
  Readable.from(pieces(size, read)).pipe(decoder);
  const base = await decoder.toBuffer({ resolveWithObject: true });
  const raw = { width: base.info.width, height: base.info.height, channels: base.info.channels };
  const out: RenderedPreview[] = [];
  for (const target of PREVIEW_WIDTHS) {
    const { data, info } = await sharp(base.data, { raw })
      .resize({ width: target, height: target * PREVIEW_MAX_ASPECT, fit: 'inside', withoutEnlargement: true })
      .webp({ quality: 75, effort: 4 })
      .toBuffer({ resolveWithObject: true });
    // Never upscaled: once the image is narrower than a bucket, wider buckets are the same picture.
    if (out.some((p) => p.width === info.width)) continue;
    out.push({ width: info.width, height: info.height, data: new Uint8Array(data.buffer, data.byteOffset, data.length) });
  }
  return out;
}

async function* pieces(size: number, read: ReadRange): AsyncGenerator<Buffer> {
  for (let at = 0; at < size; at += READ_PIECE) {
    const bytes = await read(at, Math.min(size, at + READ_PIECE));
    if (bytes.length === 0) return;
    yield bytes;
  }
}
