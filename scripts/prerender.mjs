// Issue 9: the public pages paint from their HTML. They are rendered at build time from the same
// components the app runs (src/prerender/public-pages.tsx), with placeholders for the text they
// take from /config.json; the site (server/site/prerendered.ts) fills them in once at start, so
// one build still serves every deployment (design §2).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { build } from 'esbuild';
import { productionBuilds } from './production-builds.mjs';
import { reactToPreact } from './react-to-preact.mjs';

/** Where the markup goes, beside the shell it is spliced into. */
const PRERENDER_FILE = path.join('prerender', 'pages.json');

/** Text that no escaping changes and no site name, URL or address is likely to hold. */
const PLACEHOLDERS = { siteName: '%%STASH_SITE_NAME%%', communityUrl: '%%STASH_COMMUNITY_URL%%', contactEmail: '%%STASH_CONTACT_EMAIL%%' };

/** Stands in for the operator's wallets, only to find the pages that list them. */
const SAMPLE_WALLETS = [{ label: 'Sample', address: 'sample-address' }];

/** React's names, and the packages given their production builds, resolved as the browser build resolves them (vite.config.ts's alias). */
const preactForReact = {
  name: 'react-to-preact',
  setup(esbuild) {
    for (const { find, replacement } of [...reactToPreact, ...productionBuilds]) {
      esbuild.onResolve({ filter: find }, (args) => esbuild.resolve(replacement, { kind: args.kind, resolveDir: args.resolveDir }));
    }
  },
};

/** Bundles the entry as the browser build does (React's names on preact/compat, CSS left out) and loads it. */
async function loadRenderer(root) {
  const out = await build({
    entryPoints: [path.join(root, 'src/prerender/public-pages.tsx')],
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
    const file = path.join(dir, 'public-pages.mjs');
    fs.writeFileSync(file, out.outputFiles[0].contents);
    return await import(pathToFileURL(file).href);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * The markup of every prerendered page for each shape its optional values give it: `variants`
 * is keyed by whether a community link and a contact address are set ("10": community only).
 * A page whose markup changes with donation wallets is marked `withoutWalletsOnly`: the site
 * fills in text, it does not build lists, so with wallets configured that page is left to the app.
 */
export async function prerenderPublicPages(root, outDir) {
  const { renderPublicPage, PRERENDERED_PATHS } = await loadRenderer(root);
  const pages = {};
  for (const pathname of PRERENDERED_PATHS) {
    const variants = {};
    for (const community of [true, false]) {
      for (const contact of [true, false]) {
        const config = {
          siteName: PLACEHOLDERS.siteName,
          communityUrl: community ? PLACEHOLDERS.communityUrl : null,
          contactEmail: contact ? PLACEHOLDERS.contactEmail : null,
          donationWallets: [],
        };
        variants[`${Number(community)}${Number(contact)}`] = renderPublicPage(pathname, config).markup;
      }
    }
    const withWallets = renderPublicPage(pathname, { siteName: PLACEHOLDERS.siteName, communityUrl: null, contactEmail: null, donationWallets: SAMPLE_WALLETS });
    // The title depends on the site name alone.
    pages[pathname] = { title: withWallets.title, variants, withoutWalletsOnly: withWallets.markup !== variants['00'] };
  }
  const file = path.join(outDir, PRERENDER_FILE);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, JSON.stringify({ placeholders: PLACEHOLDERS, pages }));
  return file;
}
