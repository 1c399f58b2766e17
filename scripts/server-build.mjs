// Issue 9, a lean process: in production the server runs from JavaScript compiled ahead of time
// (no TypeScript compiler in memory, no transform at start). `npm start` rebuilds it when any
// server source is newer than the build, as web-build.mjs does for the web app.
import fs from 'node:fs';
import path from 'node:path';
import { decode, encode } from '@jridgewell/sourcemap-codec';
import { build } from 'esbuild';
import { newestMtime } from './web-build.mjs';

/** What the server build is made from. */
const INPUTS = ['server', 'contract', 'package-lock.json', 'scripts/server-build.mjs'];

/**
 * One ES module per entry, laid out like the sources (dist-server/server/main.mjs beside where
 * server/main.ts is), so a module's `import.meta.dirname` sits as deep below the project as in
 * the sources and paths such as site.ts's `../../dist` resolve the same. The packages loaded at
 * start are bundled in with our code (see `buildServer`).
 */
export const SERVER_ENTRY = path.join('dist-server', 'server', 'main.mjs');

/**
 * Node flags of the production server. V8's young generation grows to 16 MiB per semi-space by
 * default, memory an idle or streaming server never needs: upload and download bodies are
 * Buffers outside the JS heap. A 2 MiB semi-space keeps ~27 MiB of RSS off an idle process
 * (issue 9, a lean process). On 2026-11-26, before the two fixes below, 2 MiB had sent half the
 * processes measured into a full collection every ~100 ms during an upload, so 4 MiB was used;
 * with the old generation's limit at 3 x and upload pieces freed as stored, 2 MiB measured as
 * fast as 4 (2026-11-27: 8 x 1 GiB at once, ingest against dd and the tus server, 4 x 1 GiB with
 * per-process CPU, each alternated) with the idle process ~3 MiB and the peak ~5 MiB lower
 * (bench/README.md).
 *
 * The old generation's limit grows to 3 x its live size after each full collection instead of
 * V8's adaptive 1.1-4 x: V8 counts ArrayBuffers allocated since the last full collection against
 * that limit, so with socket buffers streaming through, a heap of ~23 MiB live whose limit had
 * shrunk to 35 MiB ran a full collection every ~60 ms (16 a second during 8 uploads at once;
 * V8's threads 2-5 s of CPU per 8 GiB). With 3 x: 0.5 s, and the 8 uploads finish ~16 % sooner
 * at the same idle and peak memory (bench/README.md).
 */
export const SERVER_NODE_FLAGS = ['--enable-source-maps', '--max-semi-space-size=2', '--heap-growing-percent=200', ...runtimeFlags()];

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

/**
 * Packages that stay in node_modules even when imported statically: better-sqlite3 finds its
 * native addon from its own location on disk (the `bindings` package), and the AWS SDK is
 * imported only by the S3 driver's chunk, itself loaded only when the S3 store is configured.
 */
const KEPT_OUT = [/^better-sqlite3$/, /^@aws-sdk\//];

/**
 * Issue 9, a lean process: the packages the server loads at start (Fastify and its plugins,
 * Kysely, TypeBox, Ajv… ~1,000 modules, 3.3 MB of source) are bundled and minified with our own
 * code: one module instead of a thousand module records, 1.4 MB of source text instead of 3.5.
 * A package imported on demand (`await import('pg')`: the PostgreSQL driver, Redis, argon2, the
 * type sniffers…) stays in node_modules and loads only when a request or the configuration needs
 * it, as before. What a bundle cannot do: pino's transports start worker threads from files found
 * through `__dirname`; the server logs to stdout and never configures one.
 */
const packagesAtStart = {
  name: 'stash-packages-at-start',
  setup(b) {
    b.onResolve({ filter: /^[^./]/ }, (args) => {
      if (args.path.startsWith('node:')) return undefined;
      const onDemand = args.kind === 'dynamic-import';
      if (onDemand || KEPT_OUT.some((re) => re.test(args.path))) return { path: args.path, external: true };
      return undefined;
    });
  },
};

/**
 * The source map keeps only our own code's mappings. Node reads a module's whole map at load
 * under `--enable-source-maps`: with the bundled packages' mappings in, the map was 1.9 MB and
 * the idle process ~6 MiB larger; a stack frame inside a package still names its function
 * (identifiers are not minified, BUNDLE_OPTIONS), and our own frames point at the TypeScript line.
 */
export function keepOwnMappings(mapFile) {
  const map = JSON.parse(fs.readFileSync(mapFile, 'utf8'));
  const theirs = new Set(map.sources.flatMap((source, i) => (source.includes('node_modules/') ? [i] : [])));
  if (theirs.size === 0) return;
  // A package's segment becomes "unmapped" (its column alone) rather than vanishing: a frame in
  // a package must not be attributed to the last line of ours before it.
  const lines = decode(map.mappings).map((line) => {
    const kept = [];
    for (const segment of line) {
      const unmapped = segment.length === 1 || theirs.has(segment[1]);
      if (!unmapped) kept.push(segment);
      else if (kept.length === 0 || kept[kept.length - 1].length !== 1) kept.push([segment[0]]);
    }
    return kept;
  });
  map.mappings = encode(lines);
  map.sources = map.sources.map((source, i) => (theirs.has(i) ? '' : source));
  fs.writeFileSync(mapFile, JSON.stringify(map));
}

/**
 * How every server bundle is made: by `buildServer`, and by the tests that check what such a
 * bundle does (tests/server/process/server-source-map.test.ts), so they check the real thing.
 */
export const BUNDLE_OPTIONS = {
  bundle: true,
  // CommonJS packages bundled into ES modules call `require` for Node's own modules.
  banner: { js: "import { createRequire as __stashCreateRequire } from 'node:module'; const require = __stashCreateRequire(import.meta.url);" },
  platform: 'node',
  format: 'esm',
  target: 'node20',
  // Whitespace and syntax are minified, identifiers are not: functions and classes keep their own
  // names (Fastify and avvio name plugins and errors after them, pino's error lines their class,
  // stack traces read as the code does) without esbuild's `keepNames`, which names every function
  // with an `Object.defineProperty` as it is made: 13 times per API request through Fastify, and
  // once per 4 kB answer. Against minified identifiers with `keepNames`, five alternated rounds
  // of `wrk` on one build each (bench/README.md, "What each change bought"): a page of the files
  // list 19 % more requests a second (565 against 667 µs of CPU each), a 4 kB file 20 % more (83
  // against 103 µs), idle memory 2-7 MiB lower; the bundle is 1.9 MB instead of 1.4. A name
  // shared by two modules keeps a number esbuild adds (`noop2`: no class of the bundle's), and a
  // class that refers to itself the inner name esbuild gives it (`_Kysely`: no error class).
  minifyWhitespace: true,
  minifySyntax: true,
  sourcemap: true,
  sourcesContent: false,
};

/**
 * Compiles server/main.ts into `outDir` (default dist-server/); resolves with the entry's path.
 * The build is made in a folder of its own and swapped in whole, so a server starting meanwhile,
 * or a second build beside this one (two test runs, or several processes of one checkout each
 * running `npm start`), never reads a half-written file. A build that finds an up-to-date one in
 * place when it is done (a concurrent build of the same sources won) leaves that one alone:
 * processes already running from it may still load its on-demand chunks.
 */
export async function buildServer(root, outDir = path.join(root, 'dist-server')) {
  const staging = fs.mkdtempSync(`${outDir}.staging-`);
  try {
    await compileInto(root, staging);
    if (serverBuildIsStale(root, outDir)) swapIn(staging, outDir);
  } finally {
    fs.rmSync(staging, { recursive: true, force: true });
  }
  return path.join(outDir, 'server', 'main.mjs');
}

/** `npm start`'s and the browser suite's way in: the compiled entry, rebuilt first when stale. */
export async function ensureServerBuilt(root, onBuild = () => {}) {
  if (!serverBuildIsStale(root)) return path.join(root, SERVER_ENTRY);
  onBuild();
  return buildServer(root);
}

function swapIn(staging, outDir) {
  const retired = `${staging}.retired`;
  for (;;) {
    try {
      fs.renameSync(staging, outDir);
      break;
    } catch (err) {
      // A folder is only replaced once empty: move the previous build aside, then try again.
      if (err.code !== 'ENOTEMPTY' && err.code !== 'EEXIST') throw err;
      try {
        fs.renameSync(outDir, retired);
      } catch (moveErr) {
        // Another build moved it aside first.
        if (moveErr.code !== 'ENOENT') throw moveErr;
      }
    }
  }
  fs.rmSync(retired, { recursive: true, force: true });
}

async function compileInto(root, outDir) {
  const result = await build({
    ...BUNDLE_OPTIONS,
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
    // Modules the server imports only when configured (the S3 driver) become chunks of their own
    // rather than being hoisted into main.mjs, so they load only when used (issue 9).
    splitting: true,
    // Chunks sit beside main.mjs, at the depth import.meta.dirname paths (site.ts) assume.
    chunkNames: 'server/[name]-[hash]',
    plugins: [packagesAtStart],
    metafile: true,
    logLevel: 'warning',
  });
  for (const file of Object.keys(result.metafile.outputs)) if (file.endsWith('.map')) keepOwnMappings(path.join(root, file));
}
