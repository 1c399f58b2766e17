import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { brotliBytes, FIRST_LOAD_BUDGET_BYTES, firstLoadScripts } from '../../../bench/js-size.ts';

const dist = path.resolve(import.meta.dirname, '../../../dist');
const notBuilt = !fs.existsSync(path.join(dist, 'index.html'));

/** The modules a built script was made from, read from its source map. */
const sourcesOf = (mapFile: string): string[] => (JSON.parse(fs.readFileSync(mapFile, 'utf8')) as { sources: string[] }).sources;

/**
 * Issue 9: a first visit to `/` puts < 60 KiB of JavaScript on the wire. Sizes of the built
 * module graph, not times; run by .ci/run after `npm run build` (skipped when there is no build).
 */
describe.skipIf(notBuilt)('the built web app’s first load', () => {
  // Read inside each test: vitest runs a describe's body to collect it even when it is skipped.
  const built = () => firstLoadScripts(dist);

  it('stays under 60 KiB of JavaScript with brotli, and with gzip', () => {
    const scripts = built();
    const br = scripts.reduce((sum, f) => sum + brotliBytes(f, dist), 0);
    const gz = scripts.reduce((sum, f) => sum + zlib.gzipSync(fs.readFileSync(path.join(dist, f)), { level: 9 }).length, 0);
    expect(scripts.length).toBeGreaterThan(0);
    expect(br, scripts.join(', ')).toBeLessThan(FIRST_LOAD_BUDGET_BYTES);
    expect(gz, scripts.join(', ')).toBeLessThan(FIRST_LOAD_BUDGET_BYTES);
  });

  it('leaves the HTTP client, the schema library, the uploader and the signed-in screens to later chunks', () => {
    const scripts = built();
    // The build writes a source map for every chunk with code from a module (the bundler's tiny runtime has none).
    const maps = scripts.map((f) => path.join(dist, `${f}.map`)).filter((m) => fs.existsSync(m));
    const sources = maps.flatMap(sourcesOf);
    expect(sources.some((s) => s.includes('src/features/public/landing-page.tsx'))).toBe(true);
    const heavy = [/node_modules\/(axios|typebox|comlink|react-dom)\//, /src\/upload\//, /src\/features\/(admin|upload|files|settings|invites|auth)\/[^/]*-page\.tsx$/, /src\/app\/signed-in-layout\.tsx$/];
    for (const pattern of heavy) expect(sources.filter((s) => pattern.test(s)), String(pattern)).toEqual([]);
  });
});

/**
 * contract/README.md: the web app takes types from the contract, never its schemas. One value
 * imported from a schema file puts TypeBox and that file's schemas into the bundle, where they are
 * evaluated on every start: of the signed-in page, of the upload worker, of the service worker.
 */
describe.skipIf(notBuilt)('the built web app’s scripts', () => {
  /** The source map of every built script: page chunks, the upload worker's, the service worker's. */
  const builtMaps = (): string[] => {
    const assets = path.join(dist, 'assets');
    return [...fs.readdirSync(assets).filter((f) => f.endsWith('.js.map')).map((f) => path.join(assets, f)), path.join(dist, 'sw.js.map')];
  };

  it('carry no schema library: not a page chunk, not the upload worker, not the service worker', () => {
    const maps = builtMaps();
    expect(maps.some((m) => /upload\.worker-[^/]*\.js\.map$/.test(m))).toBe(true);
    expect(fs.existsSync(path.join(dist, 'sw.js.map'))).toBe(true);
    const carrying = maps.filter((m) => sourcesOf(m).some((s) => s.includes('node_modules/typebox/')));
    expect(carrying.map((m) => path.relative(dist, m))).toEqual([]);
  });

  // src/lib/sentry-sdk.ts: the SDK's namespace, imported whole, kept every integration in the
  // chunk (session replay among them, 454 KB, 128 KB with brotli), which every installed app
  // precached and every deployment with SENTRY_DSN downloaded at each start.
  it('carry of the error-reporting SDK only what the app calls: one chunk, without session replay', () => {
    const withSentry = builtMaps().filter((m) => sourcesOf(m).some((s) => s.includes('node_modules/@sentry/')));
    expect(withSentry.map((m) => path.basename(m))).toEqual([expect.stringMatching(/^sentry-sdk-[^/]*\.js\.map$/)]);
    const sources = sourcesOf(withSentry[0]!);
    expect(sources.some((s) => s.includes('node_modules/@sentry/browser/'))).toBe(true);
    expect(sources.filter((s) => /node_modules\/@sentry(-internal)?\/(replay|feedback)/.test(s))).toEqual([]);
    const chunk = path.relative(dist, withSentry[0]!.replace(/\.map$/, ''));
    expect(brotliBytes(chunk, dist)).toBeLessThan(40 * 1024);
  });

  // scripts/production-builds.mjs: React Router's export map and workbox-window's `module` field
  // hand the bundler a development and an ES5 build.
  it('take the production builds of React Router and workbox-window', () => {
    const sources = builtMaps().flatMap(sourcesOf);
    expect(sources.some((s) => s.includes('node_modules/react-router/dist/production/'))).toBe(true);
    expect(sources.some((s) => s.endsWith('node_modules/workbox-window/build/workbox-window.prod.mjs'))).toBe(true);
    expect(sources.filter((s) => /node_modules\/react-router\/dist\/development\/|workbox-window\.(dev|prod\.es5)\./.test(s))).toEqual([]);
  });
});
