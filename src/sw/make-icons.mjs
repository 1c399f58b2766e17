// Draws the app icons (public/icons/*.png) from the favicon's shapes: `node src/sw/make-icons.mjs`.
// Plain Node (zlib) so no image tool is needed; the PNGs are committed, this is how to remake them.
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';

const OUT = path.resolve(import.meta.dirname, '../../public/icons');
const BRAND = [0x4f, 0x46, 0xe5];
const LID = [0xc7, 0xd2, 0xfe];
const WHITE = [0xff, 0xff, 0xff];

const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});
function crc32(buf) {
  let c = 0xffffffff;
  for (const b of buf) c = CRC_TABLE[(c ^ b) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}
function chunk(type, data) {
  const len = Buffer.alloc(4);
  len.writeUInt32BE(data.length);
  const body = Buffer.concat([Buffer.from(type, 'ascii'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(body));
  return Buffer.concat([len, body, crc]);
}
function png(size, rgba) {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(size, 0);
  ihdr.writeUInt32BE(size, 4);
  ihdr[8] = 8; // bit depth
  ihdr[9] = 6; // RGBA
  const raw = Buffer.alloc(size * (size * 4 + 1));
  for (let y = 0; y < size; y++) rgba.copy(raw, y * (size * 4 + 1) + 1, y * size * 4, (y + 1) * size * 4);
  return Buffer.concat([Buffer.from([137, 80, 78, 71, 13, 10, 26, 10]), chunk('IHDR', ihdr), chunk('IDAT', zlib.deflateSync(raw, { level: 9 })), chunk('IEND', Buffer.alloc(0))]);
}

// Shapes in the favicon's 64×64 space.
const inRoundRect = (x, y, x0, y0, w, h, r) => {
  if (x < x0 || y < y0 || x > x0 + w || y > y0 + h) return false;
  const cx = Math.min(Math.max(x, x0 + r), x0 + w - r);
  const cy = Math.min(Math.max(y, y0 + r), y0 + h - r);
  return (x - cx) ** 2 + (y - cy) ** 2 <= r * r;
};
const inBody = (x, y) => y >= 24 && y <= 50 && x >= 20 + ((y - 24) / 26) * 3 && x <= 44 - ((y - 24) / 26) * 3;
const inLid = (x, y) => inRoundRect(x, y, 17, 16, 30, 6, 3);

/** maskable: full-bleed background, artwork shrunk into the 80% safe circle. */
function draw(size, maskable) {
  const rgba = Buffer.alloc(size * size * 4);
  const SS = 4;
  for (let py = 0; py < size; py++) {
    for (let px = 0; px < size; px++) {
      const acc = [0, 0, 0, 0];
      for (let sy = 0; sy < SS; sy++) {
        for (let sx = 0; sx < SS; sx++) {
          let x = ((px + (sx + 0.5) / SS) / size) * 64;
          let y = ((py + (sy + 0.5) / SS) / size) * 64;
          const bg = maskable || inRoundRect(x, y, 0, 0, 64, 64, 14);
          if (maskable) {
            x = 32 + (x - 32) / 0.7;
            y = 32 + (y - 32) / 0.7;
          }
          const colour = inLid(x, y) ? LID : inBody(x, y) ? WHITE : bg ? BRAND : null;
          if (!colour) continue;
          acc[0] += colour[0];
          acc[1] += colour[1];
          acc[2] += colour[2];
          acc[3] += 255;
        }
      }
      const n = SS * SS;
      const covered = acc[3] / 255;
      const i = (py * size + px) * 4;
      if (covered > 0) {
        rgba[i] = Math.round(acc[0] / covered);
        rgba[i + 1] = Math.round(acc[1] / covered);
        rgba[i + 2] = Math.round(acc[2] / covered);
      }
      rgba[i + 3] = Math.round(acc[3] / n);
    }
  }
  return png(size, rgba);
}

fs.mkdirSync(OUT, { recursive: true });
fs.writeFileSync(path.join(OUT, 'icon-192.png'), draw(192, false));
fs.writeFileSync(path.join(OUT, 'icon-512.png'), draw(512, false));
fs.writeFileSync(path.join(OUT, 'maskable-512.png'), draw(512, true));
fs.writeFileSync(path.join(OUT, 'apple-touch-icon-180.png'), draw(180, true));
console.log(`icons written to ${OUT}`);
