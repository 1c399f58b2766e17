import zlib from 'node:zlib';

const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k += 1) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});

function crc32(buf: Buffer): number {
  let c = 0xffffffff;
  for (const b of buf) c = CRC_TABLE[(c ^ b) & 0xff]! ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

function chunk(type: string, data: Buffer): Buffer {
  const len = Buffer.alloc(4);
  len.writeUInt32BE(data.length);
  const body = Buffer.concat([Buffer.from(type, 'ascii'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(body));
  return Buffer.concat([len, body, crc]);
}

/**
 * A real picture (an RGB PNG of a sunset-like gradient with a sun), so thumbnails in the
 * browser tests look like a photo and the server's type sniffing accepts it (design §7).
 */
export function photoPng(width = 480, height = 360): Buffer {
  const raw = Buffer.alloc((width * 3 + 1) * height);
  for (let y = 0; y < height; y += 1) {
    const row = y * (width * 3 + 1);
    raw[row] = 0; // filter: none
    for (let x = 0; x < width; x += 1) {
      const t = y / height;
      const dx = x - width * 0.65;
      const dy = y - height * 0.45;
      const sun = dx * dx + dy * dy < (height * 0.12) ** 2;
      const sea = y > height * 0.62;
      const i = row + 1 + x * 3;
      raw[i] = sun ? 255 : sea ? 30 + 40 * t : 250 - 120 * t;
      raw[i + 1] = sun ? 220 : sea ? 70 + 60 * t : 120 + 40 * t;
      raw[i + 2] = sun ? 120 : sea ? 140 + 60 * t : 90 + 140 * t;
    }
  }
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header[8] = 8; // bit depth
  header[9] = 2; // truecolour
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', header),
    chunk('IDAT', zlib.deflateSync(raw)),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}
