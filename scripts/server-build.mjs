// Issue 9, a lean process: in production the server runs from JavaScript compiled ahead of time
// (no TypeScript compiler in memory, no transform at start). `npm start` rebuilds it when any
// server source is newer than the build, as web-build.mjs does for the web app.
import fs from 'node:fs';
import path from 'node:path';
import { build } from 'esbuild';
import { newestMtime } from './web-build.mjs';

/** What the server build is made from. */
const INPUTS = ['server', 'contract', 'package-lock.json'];

/**
 * One ES module per entry, laid out like the sources (dist-server/server/main.mjs beside where
 * server/main.ts is), so a module's `import.meta.dirname` sits as deep below the project as in
 * the sources and paths such as site.ts's `../../dist` resolve the same. Packages stay in
 * node_modules (external); only our own code is bundled.
 */
export const SERVER_ENTRY = path.join('dist-server', 'server', 'main.mjs');

/**
 * Node flags of the production server. V8's young generation grows to 16 MiB per semi-space by
 * default, memory an idle or streaming server never needs: upload and download bodies are
 * Buffers outside the JS heap. A 4 MiB semi-space keeps ~24 MiB of RSS off an idle process
 * (98 against 122 MiB; issue 9, a lean process). 2 MiB kept 4 MiB more off, but in half the
 * processes measured an upload then ran with a full collection every ~100 ms, V8's GC threads
 * burning 2-3 s of CPU per GiB: 150-210 instead of 240-300 MiB/s (bench/README.md).
 *
 * The old generation's limit grows to 3 x its live size after each full collection instead of
 * V8's adaptive 1.1-4 x: V8 counts ArrayBuffers allocated since the last full collection against
 * that limit, so with socket buffers streaming through, a heap of ~23 MiB live whose limit had
 * shrunk to 35 MiB ran a full collection every ~60 ms (16 a second during 8 uploads at once;
 * V8's threads 2-5 s of CPU per 8 GiB). With 3 x: 0.5 s, and the 8 uploads finish ~16 % sooner
 * at the same idle and peak memory (bench/README.md).
 */
export const SERVER_NODE_FLAGS = ['--enable-source-maps', '--max-semi-space-size=4', '--heap-growing-percent=200', ...runtimeFlags()];

/**
 * V8 features the server relies on that this Node has only behind a flag: on Node 20 (V8 11.3)
 * `ArrayBuffer.prototype.transfer`, with which an upload's body pieces are freed as soon as they
 * are stored (server/lib/body-pieces.ts); V8 shipped it unflagged from 11.4 (Node 22), where the
 * flag is not needed and, once V8 drops it, would stop Node from starting (`bad option`). The
 * tests run with the same (vitest.config.ts).
 */
export function runtimeFlags() {
  const flag = '--harmony-rab-gsab-transfer';
  const native = typeof ArrayBuffer.prototype.transfer === 'function' && !process.execArgv.includes(flag);
  return native ? [] : [flag];
}

/**
 * Environment of the production server, beside the flags. glibc's malloc serves blocks of 128 KiB
 * and more from mappings of their own, returned when freed, but by default it raises that bound to
 * the size of any such block freed (eight uploads at once free 256 KiB hash batches beyond the
 * spares kept, lib/sha256-off-thread.ts, among others): blocks of that size then came out of the
 * arenas, where the uploads left them scattered and the process kept the pages. Fixed at 128 KiB,
 * 8 × 1 GiB uploads at once peaked ~10 MiB lower (medians of two alternated runs: 177 and 172 MiB
 * against 192 and 183), idle ~3 MiB lower, in the same time (bench/README.md).
 */
export const SERVER_ENV = { MALLOC_MMAP_THRESHOLD_: '131072' };

/**
 * How the compiled server is started, by `npm start` and by the tests and benchmarks that run
 * it as production does: its flags, and its environment over `env` (where the operator's own
 * setting of the same variable wins).
 */
export function serverLaunch(entry, env) {
  return { args: [...SERVER_NODE_FLAGS, entry], env: { ...SERVER_ENV, ...env } };
}

/** True when the compiled entry is missing or older than any source. */
export function serverBuildIsStale(root, outDir = path.join(root, 'dist-server')) {
  const entry = path.join(outDir, 'server', 'main.mjs');
  if (!fs.existsSync(entry)) return true;
  const built = fs.statSync(entry).mtimeMs;
  return INPUTS.some((input) => newestMtime(path.join(root, input)) > built);
}

/** Compiles server/main.ts into `outDir` (default dist-server/); resolves with the entry's path. */
export async function buildServer(root, outDir = path.join(root, 'dist-server')) {
  await build({
    absWorkingDir: root,
    entryPoints: [
      path.join(root, 'server', 'main.ts'),
      // The metadata reader runs as a child process of its own (server/modules/media/spawn-reader.ts),
      // which looks for it beside the module that spawns it: in the bundle, beside main.mjs.
      { in: path.join(root, 'server', 'modules', 'media', 'metadata-worker.ts'), out: path.join('server', 'metadata-worker') },
    ],
    outbase: root,
    outdir: outDir,
    outExtension: { '.js': '.mjs' },
    bundle: true,
    // Modules the server imports only when configured (the S3 driver and the AWS SDK) become chunks of
    // their own rather than being hoisted into main.mjs, so they load only when used (issue 9).
    splitting: true,
    // Chunks sit beside main.mjs, at the depth import.meta.dirname paths (site.ts) assume.
    chunkNames: 'server/[name]-[hash]',
    packages: 'external',
    platform: 'node',
    format: 'esm',
    target: 'node20',
    sourcemap: true,
    logLevel: 'warning',
  });
  return path.join(outDir, 'server', 'main.mjs');
}
