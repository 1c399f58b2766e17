import zlib from 'node:zlib';

/**
 * file-type names some types from their first two bytes alone (a few from a byte and a bit
 * pattern). Incompressible bytes — an encrypted volume, a brotli stream, a password manager's
 * vault, noise — start with one of them about once in 1,700 files (115 of 200,000 random 4 KiB
 * heads, 2026-12-03), and six of those types are outside the default allowed list (design §4):
 * about one such upload in 7,000 was refused as "Files of type application/x-arj are not allowed
 * on this site", a type its owner never sent, and the same bytes were refused every time.
 *
 * Each of these types is believed only when the structure its first bytes announce follows
 * them, as libmagic and ffmpeg's probes do; otherwise the bytes are of a type nobody knows
 * (design §7: still decided by the bytes, file-kind.ts `unknownKind`). The checks stay strict
 * where a wrong "no" would let something through: anything Windows could start is still a
 * program.
 */
const CONFIRM: Readonly<Record<string, (head: Buffer, totalSize: number) => boolean>> = {
  'application/x-msdownload': isProgram,
  'application/x-apple-diskimage': startsZlibStream,
  'application/postscript': hasPrintableFirstLine,
  'application/x-compress': hasCompressFlags,
  'application/x-cpio': hasCpioHeader,
  'application/x-arj': hasArjMainHeader,
  'image/bmp': hasBmpInfoHeader,
  'audio/mpeg': isMpegAudioFrame,
  'audio/aac': isAdtsFrame,
  'video/mp2t': hasThirdTransportPacket,
};

/** Whether file-type's answer for `head` (of a file of `totalSize` bytes) holds: true for every type it names from enough bytes. */
export function confirmsSignature(mime: string, head: Buffer, totalSize: number): boolean {
  const confirm = CONFIRM[mime];
  return !confirm || confirm(head, totalSize);
}

/**
 * "MZ" is every DOS and Windows program's start. A Windows, OS/2 or 16-bit Windows program has
 * its real header where e_lfanew (0x3c) points — past the head but inside the file, it cannot be
 * looked at and the file is taken for a program —; a DOS program has a header whose relocation
 * table starts inside it (0x1c–0x40) and whose last page holds under 512 bytes.
 */
function isProgram(head: Buffer, totalSize: number): boolean {
  if (head.length < 0x40) return false;
  const next = head.readUInt32LE(0x3c);
  if (next >= 0x40 && next + 4 <= head.length) {
    const sig = head.toString('latin1', next, next + 4);
    if (sig === 'PE\0\0' || /^(NE|LE|LX)/.test(sig)) return true;
  } else if (next >= head.length && next + 4 <= totalSize) {
    return true;
  }
  const relocations = head.readUInt16LE(0x18);
  const lastPage = head.readUInt16LE(0x02);
  const pages = head.readUInt16LE(0x04);
  return relocations >= 0x1c && relocations <= 0x40 && lastPage < 512 && pages > 0;
}

/**
 * A disk image file-type names from 0x78 0x01, a zlib stream's header: believed when what
 * follows inflates. Noise fails within a few bytes (a block type that does not exist, a distance
 * before the start); a real stream cut off by the head's end does not.
 */
function startsZlibStream(head: Buffer): boolean {
  try {
    // A KiB of deflate inflates to at most ~1 MiB: bounded, and enough to tell.
    zlib.inflateSync(head.subarray(0, 1024), { finishFlush: zlib.constants.Z_SYNC_FLUSH, maxOutputLength: 2 * 1024 * 1024 });
    return true;
  } catch (err) {
    // More than the bound came out: a stream, and a very compressible one.
    return (err as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE';
  }
}

/**
 * "%!" starts PostScript's first comment ("%!PS-Adobe-3.0", or "%!" alone): the rest of the line
 * is printable ASCII, and the line ends within 256 bytes or with the file.
 */
function hasPrintableFirstLine(head: Buffer): boolean {
  const end = head.subarray(0, 256).findIndex((b) => b === 0x0a || b === 0x0d);
  if (end === -1 && head.length > 256) return false;
  const line = head.subarray(2, end === -1 ? head.length : end);
  return line.every((b) => (b >= 0x20 && b < 0x7f) || b === 0x09);
}

/**
 * Unix compress (0x1f 0x9d): its third byte's reserved bits are clear and it holds the code
 * width, 9 to 16 bits. 0x1f 0xa0 (SCO's compress -H) has no header of its own to check.
 */
function hasCompressFlags(head: Buffer): boolean {
  if (head[1] !== 0x9d || head.length < 3) return false;
  const flags = head[2]!;
  const bits = flags & 0x1f;
  return (flags & 0x60) === 0 && bits >= 9 && bits <= 16;
}

/** Binary cpio (0xc7 0x71): a 26-byte header, then the entry's name, as long as namesize says, ending in NUL. */
function hasCpioHeader(head: Buffer): boolean {
  if (head.length < 28) return false;
  const nameSize = head.readUInt16LE(20);
  if (nameSize < 2 || nameSize > 4096 || 26 + nameSize > head.length) return false;
  const name = head.subarray(26, 26 + nameSize - 1);
  return head[26 + nameSize - 1] === 0 && !name.includes(0);
}

/** ARJ (0x60 0xea): the main header's size (at most 2,600), a known host system, and file type 2 (the archive's comment header). */
function hasArjMainHeader(head: Buffer): boolean {
  if (head.length < 12) return false;
  const size = head.readUInt16LE(2);
  return size > 0 && size <= 2600 && head[7]! <= 11 && head[10] === 2;
}

/** "BM": the bitmap's info header follows at 14, one of the sizes Windows and OS/2 define. */
function hasBmpInfoHeader(head: Buffer): boolean {
  if (head.length < 18) return false;
  const size = head.readUInt32LE(14);
  return size === 12 || size === 40 || size === 52 || size === 56 || size === 108 || size === 124 || (size >= 16 && size <= 64);
}

const MPEG_BITRATES_KBPS: Readonly<Record<string, readonly number[]>> = {
  // [version 1 | 2][layer 1 | 2 | 3], index 1–14.
  '1-1': [32, 64, 96, 128, 160, 192, 224, 256, 288, 320, 352, 384, 416, 448],
  '1-2': [32, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320, 384],
  '1-3': [32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320],
  '2-1': [32, 48, 56, 64, 80, 96, 112, 128, 144, 160, 176, 192, 224, 256],
  '2-2': [8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160],
  '2-3': [8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160],
};
const MPEG_SAMPLE_RATES = [44100, 48000, 32000];

/** An MPEG audio frame header at `at`: its length in bytes, or null when the header is not one. */
function mpegFrameLength(head: Buffer, at: number): number | null {
  if (at + 4 > head.length || head[at] !== 0xff || (head[at + 1]! & 0xe0) !== 0xe0) return null;
  const versionBits = (head[at + 1]! >> 3) & 3; // 0: 2.5, 1: reserved, 2: 2, 3: 1
  const layer = 4 - ((head[at + 1]! >> 1) & 3); // 4: reserved
  const bitrateIndex = head[at + 2]! >> 4;
  const rateIndex = (head[at + 2]! >> 2) & 3;
  // Free-format bitrates (index 0) carry no length to check the next frame by.
  if (versionBits === 1 || layer === 4 || bitrateIndex === 0 || bitrateIndex === 15 || rateIndex === 3) return null;
  const v1 = versionBits === 3;
  const kbps = MPEG_BITRATES_KBPS[`${v1 ? 1 : 2}-${layer}`]![bitrateIndex - 1]!;
  const rate = MPEG_SAMPLE_RATES[rateIndex]! / (v1 ? 1 : versionBits === 2 ? 2 : 4);
  const padding = (head[at + 2]! >> 1) & 1;
  if (layer === 1) return (Math.floor((12 * kbps * 1000) / rate) + padding) * 4;
  return Math.floor(((layer === 3 && !v1 ? 72 : 144) * kbps * 1000) / rate) + padding;
}

/**
 * A frame header at the start and, where its length says the next frame starts, another (or the
 * end of what was read: a file of one frame, or a head cut off there). `headerBytes`: how much
 * of a header `frameLength` needs to read.
 */
function followedByFrame(head: Buffer, frameLength: (head: Buffer, at: number) => number | null, headerBytes: number): boolean {
  const length = frameLength(head, 0);
  if (length === null) return false;
  return length + headerBytes > head.length || frameLength(head, length) !== null;
}

/** MPEG audio: a valid frame header followed by another. */
function isMpegAudioFrame(head: Buffer): boolean {
  return followedByFrame(head, mpegFrameLength, 4);
}

/**
 * An ADTS (AAC) frame header at `at`: layer 0, a sampling index that exists (0–12) and a frame
 * length that holds at least its own header; that length, or null when the header is not one.
 */
function adtsFrameLength(head: Buffer, at: number): number | null {
  if (at + 7 > head.length || head[at] !== 0xff || (head[at + 1]! & 0xf6) !== 0xf0) return null;
  if (((head[at + 2]! >> 2) & 0xf) > 12) return null;
  const length = ((head[at + 3]! & 0x03) << 11) | (head[at + 4]! << 3) | (head[at + 5]! >> 5);
  const headerLength = head[at + 1]! & 1 ? 7 : 9;
  return length >= headerLength ? length : null;
}

/** ADTS (AAC): a valid frame header followed by another. */
function isAdtsFrame(head: Buffer): boolean {
  return followedByFrame(head, adtsFrameLength, 7);
}

/**
 * MPEG transport stream: file-type checks the sync byte (0x47) of two packets, 188 bytes apart
 * (192 with a 4-byte time code, as Blu-ray's M2TS): a third is where the next packet starts.
 */
function hasThirdTransportPacket(head: Buffer): boolean {
  const third = head[0] === 0x47 && head[188] === 0x47 ? 376 : 4 + 2 * 192;
  return third >= head.length || head[third] === 0x47;
}
