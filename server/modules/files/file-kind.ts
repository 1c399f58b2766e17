import crypto from 'node:crypto';
import type { fileTypeFromBuffer } from 'file-type';
import type { imageSize } from 'image-size';
import { confirmsSignature } from './weak-signatures.ts';

/**
 * Issue 9, a lean process: the two parsers load at the first upload, not at start, so an idle
 * process (and one that only serves files) does not hold them.
 */
let loaded: Promise<{ fileTypeFromBuffer: typeof fileTypeFromBuffer; imageSize: typeof imageSize }> | null = null;
export const loadSniffers = () =>
  (loaded ??= Promise.all([import('file-type'), import('image-size')]).then(([ft, is]) => ({ fileTypeFromBuffer: ft.fileTypeFromBuffer, imageSize: is.imageSize })));

/**
 * The largest width or height a file record holds: the columns are 32-bit integers on
 * PostgreSQL, and no real image or video comes near it. A header claiming more (a crafted PNG's
 * IHDR, random bytes that happen to start like an image) is a size nobody knows (spec §3: null),
 * never a failed insert and a 500.
 */
export const MAX_DIMENSION = 2 ** 31 - 1;

/** Width and height as a file record stores them: both plausible, or both null. */
export function storableSize(size: { width: number | null; height: number | null }): { width: number | null; height: number | null } {
  const ok = (n: number | null) => n !== null && Number.isInteger(n) && n > 0 && n <= MAX_DIMENSION;
  return ok(size.width) && ok(size.height) ? { width: size.width, height: size.height } : { width: null, height: null };
}

/** How much of a file's head is read to tell its type and image size (never the whole file). */
export const HEAD_BYTES = 256 * 1024;

export interface FileKind {
  mime: string;
  ext: string;
  width: number | null;
  height: number | null;
}

/**
 * Design §7: the type comes from the bytes, never from the name or the client's claim. Bytes
 * file-type does not know (or names from a signature the rest of the head does not bear out,
 * weak-signatures.ts) are text/plain when they read as UTF-8 text (so HTML, SVG or script
 * disguised under any name end up as plain text), application/octet-stream otherwise.
 */
export async function detectKind(head: Buffer, totalSize: number): Promise<FileKind> {
  const { fileTypeFromBuffer, imageSize } = await loadSniffers();
  const found = await fileTypeFromBuffer(head);
  // A type named from a couple of bytes counts only when the rest of its header follows them.
  const { mime, ext } = found && confirmsSignature(found.mime, head, totalSize) ? found : unknownKind(head, totalSize);
  let width: number | null = null;
  let height: number | null = null;
  if (mime.startsWith('image/')) {
    try {
      const dim = imageSize(head);
      width = dim.width ?? null;
      height = dim.height ?? null;
    } catch {
      // Some formats keep their size past the head; the spec allows null (spec §3).
    }
  }
  return { mime, ext, width, height };
}

/**
 * The type of bytes file-type does not know, or could not read within its budget (its reader
 * ran out of time or memory, server/modules/media/metadata-pool.ts): this check is a bounded
 * pass over the head, safe on the main thread.
 */
export function unknownKind(head: Buffer, totalSize: number): FileKind {
  return looksLikeText(head, totalSize)
    ? { mime: 'text/plain', ext: 'txt', width: null, height: null }
    : { mime: 'application/octet-stream', ext: 'bin', width: null, height: null };
}

function looksLikeText(head: Buffer, totalSize: number): boolean {
  if (totalSize === 0) return true;
  if (head.includes(0)) return false;
  // The head may end inside a multi-byte character: drop up to 3 trailing bytes before checking.
  const complete = head.length < totalSize ? trimPartialUtf8(head) : head;
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(complete);
    return true;
  } catch {
    return false;
  }
}

function trimPartialUtf8(buf: Buffer): Buffer {
  for (let back = 1; back <= 3 && back <= buf.length; back++) {
    const byte = buf[buf.length - back] as number;
    if ((byte & 0xc0) === 0xc0) return buf.subarray(0, buf.length - back);
    if ((byte & 0x80) === 0) break;
  }
  return buf;
}

/** Design §7 allowed list: exact entries and `type/*` wildcards. An empty list allows nothing. */
export function isAllowed(mime: string, allowed: readonly string[]): boolean {
  const [type] = mime.split('/');
  return allowed.some((entry) => entry === mime || entry === `${type}/*`);
}

/** 10 url-safe random characters: 60 bits, enough to make names unguessable (design §7). */
export function newActualName(ext: string): string {
  const id = crypto.randomBytes(8).toString('base64url').slice(0, 10);
  return `${id}.${ext}`;
}

export const ACTUAL_NAME_PATTERN = /^[A-Za-z0-9_-]{10}\.[A-Za-z0-9]{1,12}$/;

// Name cleaning lives with the other name rules (issue 8 item 9); re-exported for existing imports.
export { cleanOriginalName } from './file-name.ts';
