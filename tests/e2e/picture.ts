import sharp from 'sharp';

/**
 * A real picture (an RGB PNG of a sunset-like gradient with a sun), so thumbnails in the
 * browser tests look like a photo and the server's type sniffing accepts it (design §7).
 * Encoded by sharp, the library the server makes previews with.
 */
export function photoPng(width = 480, height = 360): Promise<Buffer> {
  const raw = Buffer.alloc(width * 3 * height);
  for (let y = 0; y < height; y += 1) {
    for (let x = 0; x < width; x += 1) {
      const t = y / height;
      const dx = x - width * 0.65;
      const dy = y - height * 0.45;
      const sun = dx * dx + dy * dy < (height * 0.12) ** 2;
      const sea = y > height * 0.62;
      const i = (y * width + x) * 3;
      raw[i] = sun ? 255 : sea ? 30 + 40 * t : 250 - 120 * t;
      raw[i + 1] = sun ? 220 : sea ? 70 + 60 * t : 120 + 40 * t;
      raw[i + 2] = sun ? 120 : sea ? 140 + 60 * t : 90 + 140 * t;
    }
  }
  return sharp(raw, { raw: { width, height, channels: 3 } }).png().toBuffer();
}
