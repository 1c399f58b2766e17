import type Sharp from 'sharp';
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

let renderer: Promise<typeof Sharp> | null = null;

/**
 * libvips, loaded once per reader and not at the top: only the previews reader pays for it.
 * That reader loads it as it starts (metadata-worker.ts), at the server's priority: loading it
 * is ~170 ms of CPU, three times a photo's render, and at the readers' low priority on a busy
 * machine (nice 19 then) a render that began with it took 40 s.
 */
export function loadRenderer(): Promise<typeof Sharp> {
  renderer ??= import('sharp').then(({ default: sharp }) => {
    sharp.concurrency(1);
    sharp.cache(false);
    return sharp;
  });
  return renderer;
}

/**
 * Runs in the reader process (metadata-worker.ts): reads the file in through `read`, decodes
 * it once (EXIF orientation applied, first frame of an animation), shrinks it to the widest
 * preview and encodes each width from that. Widths that would upscale collapse into one.
 */
export async function renderPreviews(size: number, read: ReadRange): Promise<RenderedPreview[]> {
  const sharp = await loadRenderer();
  const head = await read(0, Math.min(size, READ_PIECE));
  // A bomb's header is in its first bytes, but sharp reads a stream whole before looking at it:
  // a 200 MiB file claiming 100,000 × 100,000 px was read through (200 range reads) and held
  // twice over (~470 MB in the reader) only to be refused. Its header is read first, from the
  // head; a head that says nothing (a TIFF's directory at its end) leaves it to the decoder.
  const claimed = await sharp(head, { limitInputPixels: false })
    .metadata()
    .catch(() => null);
  if (claimed?.width && claimed.height && claimed.width * claimed.height > LIMIT_INPUT_PIXELS) return [];
  const widest = PREVIEW_WIDTHS[PREVIEW_WIDTHS.length - 1] as number;
  const base = await sharp(await whole(head, size, read), { limitInputPixels: LIMIT_INPUT_PIXELS, sequentialRead: true, failOn: 'error' })
    .timeout({ seconds: SHARP_TIMEOUT_SECONDS })
    .rotate()
    .resize({ width: widest, height: widest * PREVIEW_MAX_ASPECT, fit: 'inside', withoutEnlargement: true })
    .raw()
    .toBuffer({ resolveWithObject: true });
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

/** The file in one buffer, read a piece at a time: sharp keeps a stream's pieces and then copies them into one. */
async function whole(head: Buffer, size: number, read: ReadRange): Promise<Buffer> {
  if (head.length >= size) return head;
  const bytes = Buffer.allocUnsafe(size);
  let at = head.copy(bytes);
  while (at < size) {
    const piece = await read(at, Math.min(size, at + READ_PIECE));
    if (piece.length === 0) break;
    at += piece.copy(bytes, at);
  }
  return bytes.subarray(0, at);
}
