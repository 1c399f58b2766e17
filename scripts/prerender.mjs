// Issue 9: `/` paints from its HTML. The landing page is rendered at build time from the same
// components the app runs (src/prerender/landing.tsx), with placeholders for the two values it
// takes from /config.json; the site (server/site/landing.ts) fills them in once at start, so one
// build still serves every deployment (design §2).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { build } from 'esbuild';
import { reactToPreact } from './react-to-preact.mjs';

/** Where the markup goes, beside the shell it is spliced into. */
const PRERENDER_FILE = path.join('prerender', 'landing.json');

/** Text that no escaping changes and no site name or URL is likely to hold. */
const PLACEHOLDERS = { siteName: '%%STASH_SITE_NAME%%', communityUrl: '%%STASH_COMMUNITY_URL%%' };

/** React's names resolved as the browser build resolves them (vite.config.ts's alias). */
const preactForReact = {
  name: 'react-to-preact',
  setup(esbuild) {
    for (const { find, replacement } of reactToPreact) {
      esbuild.onResolve({ filter: find }, (args) => esbuild.resolve(replacement, { kind: args.kind, resolveDir: args.resolveDir }));
    }
  },
};

/** Bundles the entry as the browser build does (React's names on preact/compat, CSS left out) and loads it. */
async function loadRenderer(root) {
  const out = await build({
    entryPoints: [path.join(root, 'src/prerender/landing.tsx')],
    bundle: true,
    platform: 'node',
    format: 'esm',
    jsx: 'automatic',
    plugins: [preactForReact],
    loader: { '.css': 'empty' },
    define: { 'process.env.NODE_ENV': '"production"' },
    write: false,
    logLevel: 'warning',
  });
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'stash-prerender-'));
  try {
    const file = path.join(dir, 'landing.mjs');
    fs.writeFileSync(file, out.outputFiles[0].contents);
    return await import(pathToFileURL(file).href);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** Writes `<outDir>/prerender/landing.json`: the markup with and without a community link. */
export async function prerenderLanding(root, outDir) {
  const { renderLanding } = await loadRenderer(root);
  const markup = {
    placeholders: PLACEHOLDERS,
    withCommunity: renderLanding({ siteName: PLACEHOLDERS.siteName, communityUrl: PLACEHOLDERS.communityUrl }),
    withoutCommunity: renderLanding({ siteName: PLACEHOLDERS.siteName, communityUrl: null }),
  };
  const file = path.join(outDir, PRERENDER_FILE);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, JSON.stringify(markup));
  return file;
}
