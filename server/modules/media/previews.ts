/**
 * Preview renditions of a listed image (issue 11 item 9, design §1 "previews"): WebP, at most
 * 160, 320 and 640 px wide, never upscaled (a 100 px image has one 100 px preview), made once
 * off the request path and stored beside the file under keys of their own.
 */
export const PREVIEW_WIDTHS = [160, 320, 640] as const;

/** A preview is never taller than this many times its width bucket (a 1×50 strip stays small). */
export const PREVIEW_MAX_ASPECT = 4;

/**
 * Types libvips decodes in sharp's prebuilt binaries. SVG is left out on purpose: it is an
 * active type (design §8) and rendering it would run a second parser over hostile markup.
 */
export const PREVIEWABLE_TYPES = ['image/jpeg', 'image/png', 'image/webp', 'image/gif', 'image/avif', 'image/tiff'];

/** Bigger sources are not read for previews: a 200 MiB image is an archive, not a photo. */
export const MAX_PREVIEW_SOURCE_BYTES = 200 * 1024 * 1024;

export function isPreviewable(mime: string, size: number): boolean {
  return PREVIEWABLE_TYPES.includes(mime) && size > 0 && size <= MAX_PREVIEW_SOURCE_BYTES;
}

/** One stored preview as the `files.previews` column records it (JSON array). */
export interface StoredPreview {
  width: number;
  height: number;
  bytes: number;
  /** Appended to the file's storage key; unique per rendering, so two renderers never share a key. */
  suffix: string;
}

export function previewKey(storageKey: string, preview: Pick<StoredPreview, 'suffix'>): string {
  return `${storageKey}${preview.suffix}`;
}

/** The column's value, read defensively: null (not made yet) and anything malformed give no previews. */
export function parsePreviews(column: string | null | undefined): StoredPreview[] {
  if (!column) return [];
  try {
    const value: unknown = JSON.parse(column);
    if (!Array.isArray(value)) return [];
    return value.filter(
      (p): p is StoredPreview =>
        typeof p === 'object' &&
        p !== null &&
        Number.isInteger(p.width) &&
        Number.isInteger(p.height) &&
        Number.isInteger(p.bytes) &&
        typeof p.suffix === 'string' &&
        /^p[A-Za-z0-9_-]{1,40}$/.test(p.suffix),
    );
  } catch {
    return [];
  }
}

/** Path of a preview on the files host: `/_p/<actual_name>/<width>.webp`. */
export function previewPath(actualName: string, width: number): string {
  return `/_p/${actualName}/${width}.webp`;
}

/** The File object's `previews` field (contract/files.ts), narrowest first. */
export function previewsForClient(column: string | null | undefined, actualName: string, filesUrl: string) {
  return parsePreviews(column)
    .sort((a, b) => a.width - b.width)
    .map((p) => ({ width: p.width, height: p.height, url: `${filesUrl}${previewPath(actualName, p.width)}` }));
}

/** Keys of every stored preview of a file row, for deletion. */
export function previewKeys(storageKey: string, column: string | null | undefined): string[] {
  return parsePreviews(column).map((p) => previewKey(storageKey, p));
}
