// Design §11: static assets are served pre-compressed. Every text file of the build gets a
// brotli (.br) and a gzip (.gz) twin at maximum compression, made once at build time instead of
// on each request; the site (server/site/site.ts) picks one by Accept-Encoding.
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';

const TEXT = /\.(js|mjs|css|html|svg|json|webmanifest|txt|xml)$/;
/** Below this a compressed answer saves less than its headers cost. */
const MIN_BYTES = 1024;

function walk(dir) {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? walk(path.join(dir, e.name)) : [path.join(dir, e.name)]));
}

/** Writes `<file>.br` and `<file>.gz` beside each text file of `dir` they make smaller; returns how many files. */
export function precompressDir(dir) {
  let count = 0;
  for (const file of walk(dir).filter((f) => TEXT.test(f))) {
    const raw = fs.readFileSync(file);
    if (raw.length < MIN_BYTES) continue;
    const br = zlib.brotliCompressSync(raw, {
      params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 11, [zlib.constants.BROTLI_PARAM_SIZE_HINT]: raw.length },
    });
    const gz = zlib.gzipSync(raw, { level: 9 });
    if (br.length < raw.length) fs.writeFileSync(`${file}.br`, br);
    if (gz.length < raw.length) fs.writeFileSync(`${file}.gz`, gz);
    count += 1;
  }
  return count;
}
