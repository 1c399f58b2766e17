import crypto from 'node:crypto';
import zlib from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import { detectKind, isAllowed } from '../../../server/modules/files/file-kind.ts';
import { DEFAULT_MIME_TYPES } from '../../../server/modules/settings/settings.service.ts';
import { createHttpTestApp, sendMultipart, sha256, type HttpTestApp } from '../../helpers/upload.ts';

/**
 * Types file-type names from their first couple of bytes (server/modules/files/weak-signatures.ts):
 * a file of that type is still named so, and noise that merely starts with those bytes — an
 * encrypted volume, a brotli stream — is bytes of an unknown type, not a refused one.
 */

/** Noise that is the same on every run: a test that can flake on a one-in-a-million draw is no test. */
function seededNoise(seed: string, n: number): Buffer {
  const out = Buffer.alloc(n);
  for (let o = 0, i = 0; o < n; o += 32, i++) crypto.createHash('sha256').update(`${seed}:${i}`).digest().copy(out, o);
  return out;
}

const withStart = (start: number[], rest: Buffer) => Buffer.concat([Buffer.from(start), rest.subarray(start.length)]);

/** Repeats an MPEG audio or ADTS frame header at its frame length, as a stream of frames is laid out. */
function frames(header: number[], length: number, count: number): Buffer {
  const frame = Buffer.alloc(length);
  Buffer.from(header).copy(frame);
  return Buffer.concat(Array.from({ length: count }, () => frame));
}

function windowsProgram(): Buffer {
  const exe = Buffer.alloc(1024);
  exe.write('MZ', 0, 'latin1');
  exe.writeUInt16LE(0x90, 0x02);
  exe.writeUInt16LE(3, 0x04);
  exe.writeUInt16LE(0x40, 0x18);
  exe.writeUInt32LE(0x80, 0x3c);
  exe.write('PE\0\0', 0x80, 'latin1');
  return exe;
}

/** The head of a program whose PE header sits past the head read (e_lfanew 512 KiB into a 1 MiB file). */
function programHeaderPastHead(): { head: Buffer; size: number } {
  const head = seededNoise('far', 4096);
  head.write('MZ', 0, 'latin1');
  head.writeUInt32LE(512 * 1024, 0x3c);
  return { head, size: 1024 * 1024 };
}

function dosProgram(): Buffer {
  const exe = seededNoise('dos', 2048);
  exe.write('MZ', 0, 'latin1');
  exe.writeUInt16LE(0x1c0, 0x02);
  exe.writeUInt16LE(4, 0x04);
  exe.writeUInt16LE(0x1c, 0x18);
  exe.writeUInt32LE(0xffff_fff0, 0x3c);
  return exe;
}

function arjArchive(): Buffer {
  const arj = Buffer.alloc(64);
  arj.set([0x60, 0xea]);
  arj.writeUInt16LE(0x22, 2); // basic header size
  arj.set([0x1e, 11, 1, 2, 0, 0, 2], 4); // first header size, versions, host (Unix), flags, security, file type 2
  arj.write('archive.arj\0', 34, 'latin1');
  return arj;
}

function cpioArchive(): Buffer {
  const name = 'notes.txt\0';
  const header = Buffer.alloc(26);
  header.writeUInt16LE(0o070707, 0);
  header.writeUInt16LE(0o100644, 6);
  header.writeUInt16LE(name.length, 20);
  header.writeUInt16LE(5, 24);
  return Buffer.concat([header, Buffer.from(name, 'latin1'), Buffer.from('hello\0')]);
}

function bitmap(): Buffer {
  const bmp = Buffer.alloc(14 + 40 + 16);
  bmp.write('BM', 0, 'latin1');
  bmp.writeUInt32LE(bmp.length, 2);
  bmp.writeUInt32LE(54, 10);
  bmp.writeUInt32LE(40, 14);
  bmp.writeInt32LE(2, 18);
  bmp.writeInt32LE(2, 22);
  bmp.writeUInt16LE(1, 26);
  bmp.writeUInt16LE(24, 28);
  return bmp;
}

/** Each type named from a couple of bytes: a file of it, and noise starting as it does. */
const CASES: { mime: string; real: Buffer; noise: Buffer }[] = [
  { mime: 'application/x-msdownload', real: windowsProgram(), noise: withStart([0x4d, 0x5a], seededNoise('mz', 4096)) },
  { mime: 'application/x-msdownload', real: dosProgram(), noise: withStart([0x4d, 0x5a, 0x00, 0x02], seededNoise('mz2', 4096)) },
  { mime: 'application/x-apple-diskimage', real: zlib.deflateSync(Buffer.from('koly'.repeat(5000)), { level: 0 }), noise: withStart([0x78, 0x01], seededNoise('dmg', 4096)) },
  { mime: 'application/postscript', real: Buffer.from('%!PS-Adobe-3.0\n%%BoundingBox: 0 0 612 792\nnewpath 0 0 moveto showpage\n'), noise: withStart([0x25, 0x21, 0xbc], seededNoise('ps', 4096)) },
  { mime: 'application/x-compress', real: Buffer.concat([Buffer.from([0x1f, 0x9d, 0x90]), seededNoise('z', 4093)]), noise: withStart([0x1f, 0x9d, 0xe5], seededNoise('Z', 4096)) },
  { mime: 'application/x-cpio', real: cpioArchive(), noise: withStart([0xc7, 0x71], seededNoise('cpio', 4096)) },
  { mime: 'application/x-arj', real: arjArchive(), noise: withStart([0x60, 0xea], seededNoise('arj', 4096)) },
  { mime: 'image/bmp', real: bitmap(), noise: withStart([0x42, 0x4d], seededNoise('bmp', 4096)) },
  // MPEG-1 layer 3, 128 kbit/s, 44.1 kHz: 417-byte frames.
  { mime: 'audio/mpeg', real: frames([0xff, 0xfb, 0x90, 0x64], 417, 10), noise: withStart([0xff, 0xfb, 0x90, 0x64], seededNoise('mp3', 4096)) },
  // ADTS, AAC LC, 44.1 kHz, stereo, 300-byte frames (the length is in bytes 3–5).
  { mime: 'audio/aac', real: frames([0xff, 0xf1, 0x50, 0x80, 0x25, 0x9f, 0xfc], 300, 10), noise: withStart([0xff, 0xf1, 0x50, 0x80, 0x25, 0x9f], seededNoise('aac', 4096)) },
  { mime: 'video/mp2t', real: frames([0x47, 0x40, 0x00, 0x10], 188, 10), noise: tsNoise() },
];

/** Two packets' sync bytes where file-type looks, none where a third packet would start. */
function tsNoise(): Buffer {
  const ts = seededNoise('ts', 4096);
  ts[0] = 0x47;
  ts[188] = 0x47;
  ts[376] = 0x12;
  return ts;
}

describe('types named from a couple of bytes (weak-signatures.ts)', () => {
  it.each(CASES.map((c, i) => [c.mime, i] as const))('%s (case %i): a file of the type is named so; noise that starts like it is of no known type', async (mime, i) => {
    const { real, noise } = CASES[i]!;
    expect((await detectKind(real, real.length)).mime).toBe(mime);
    // file-type alone names the noise as the type: the case tests what it claims to.
    const { fileTypeFromBuffer } = await import('file-type');
    expect((await fileTypeFromBuffer(noise))?.mime).toBe(mime);
    expect(await detectKind(noise, noise.length)).toMatchObject({ mime: 'application/octet-stream', ext: 'bin' });
  });

  it('a program whose header is past the head read is still a program; one pointing past the file is not', async () => {
    const { head, size } = programHeaderPastHead();
    expect((await detectKind(head, size)).mime).toBe('application/x-msdownload');
    expect((await detectKind(head, 512 * 1024)).mime).toBe('application/octet-stream');
  });

  it('PostScript whose first line is "%!" alone is still PostScript', async () => {
    const ps = Buffer.from('%!\n/Helvetica findfont 12 scalefont setfont\n72 720 moveto (hi) show showpage\n');
    expect((await detectKind(ps, ps.length)).mime).toBe('application/postscript');
  });

  it('a bitmap keeps its size once believed', async () => {
    expect(await detectKind(bitmap(), bitmap().length)).toEqual({ mime: 'image/bmp', ext: 'bmp', width: 2, height: 2 });
  });

  it('no incompressible file is refused by the default list for a type it is not (20,000 noise heads)', async () => {
    const refused: string[] = [];
    for (let i = 0; i < 20_000; i++) {
      const { mime } = await detectKind(seededNoise(`head-${i}`, 1024), 50_000_000);
      if (!isAllowed(mime, DEFAULT_MIME_TYPES)) refused.push(`${i}: ${mime}`);
    }
    expect(refused).toEqual([]);
  });
});

describe('uploading such files (design §7: the type from the bytes)', () => {
  let t: HttpTestApp;
  afterEach(async () => t?.close());

  it('noise that starts like an ARJ archive is taken as bytes of no known type; an ARJ archive is refused as one', async () => {
    t = await createHttpTestApp('sqlite', { chunkSize: 1 << 20 });
    const user = await t.createUser();
    const send = (data: Buffer, originalname: string) =>
      sendMultipart(`${t.apiUrl}/api/v1/files/upload`, { fields: { token: user.token, originalname, totalChunks: 1, chunkIndex: 0 }, file: { data, filename: originalname } });
    const vault = withStart([0x60, 0xea], seededNoise('vault', 64 * 1024));
    const taken = await send(vault, 'passwords.kdbx');
    expect(taken.status, JSON.stringify(taken.body)).toBe(200);
    const file = taken.body.file as { mime_type: string; url: string };
    expect(file.mime_type).toBe('application/octet-stream');
    expect(file.url).toMatch(/\.bin$/);
    const served = await fetch(`${t.filesUrl}/${file.url.split('/').pop()}`);
    expect(sha256(Buffer.from(await served.arrayBuffer()))).toBe(sha256(vault));

    const refused = await send(arjArchive(), 'old.arj');
    expect(refused.status).toBe(415);
    expect(refused.body.error).toBe('Files of type application/x-arj are not allowed on this site.');
  });
});
