import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import sharp from 'sharp';
import { afterAll, describe, expect, it } from 'vitest';

const run = promisify(execFile);
const ROOT = path.resolve(import.meta.dirname, '../../..');
const out = fs.mkdtempSync(path.join(os.tmpdir(), 'stash-compiled-'));
afterAll(() => fs.rmSync(out, { recursive: true, force: true }));

/**
 * The reader processes start from the sources under tsx (dev, tests, `npm start`), and must
 * start as well from the server compiled to JavaScript file by file (server/README.md, "Reading
 * uploaded bytes"): spawn-reader.ts then forks metadata-worker.js with no loader.
 */
describe('metadata readers compiled to JavaScript', () => {
  it('spawns metadata-worker.js, reads the type and size of a PNG and makes its previews, without tsx', async () => {
    const media = path.join(ROOT, 'server/modules/media');
    await run(
      process.execPath,
      [
        path.join(ROOT, 'node_modules/typescript/bin/tsc'),
        path.join(media, 'metadata-pool.ts'),
        path.join(media, 'metadata-worker.ts'),
        '--outDir', out, '--rootDir', ROOT,
        '--module', 'esnext', '--target', 'es2022', '--moduleResolution', 'bundler',
        '--rewriteRelativeImportExtensions', '--skipLibCheck', '--types', 'node',
      ],
      { cwd: ROOT },
    );
    fs.writeFileSync(path.join(out, 'package.json'), '{"type":"module"}');
    const png = path.join(out, 'picture.png');
    await sharp({ create: { width: 300, height: 200, channels: 3, background: '#336699' } }).png().toFile(png);
    fs.symlinkSync(path.join(ROOT, 'node_modules'), path.join(out, 'node_modules'));
    const script = `
      import fs from 'node:fs';
      import { MetadataPool, PREVIEW_LIMITS } from './server/modules/media/metadata-pool.js';
      const png = fs.readFileSync(${JSON.stringify(png)});
      const pool = new MetadataPool(PREVIEW_LIMITS);
      const kind = await pool.kind(png, png.length);
      const previews = await pool.previews(png.length, async (s, e) => png.subarray(s, e));
      await pool.close();
      console.log(JSON.stringify({ kind, previews: previews?.map((p) => [p.width, p.height]) }));
    `;
    fs.writeFileSync(path.join(out, 'check.mjs'), script);
    // Plain node, no --import tsx: only compiled files can load.
    const { stdout } = await run(process.execPath, [path.join(out, 'check.mjs')], { cwd: out });
    expect(JSON.parse(stdout)).toEqual({ kind: { mime: 'image/png', ext: 'png', width: 300, height: 200 }, previews: [[160, 107], [300, 200]] });
  }, 180_000);
});
