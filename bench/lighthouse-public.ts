import fs from 'node:fs';
import path from 'node:path';
import { buildIsStale, buildWebApp } from '../scripts/web-build.mjs';
import { startServer } from './server-process.ts';

/**
 * Issue 11 "What must be shown": Lighthouse (mobile) accessibility 100 and SEO 100 on the public
 * pages. Builds the web app if stale, starts the real server (site role) from its compiled
 * JavaScript, audits each page with Lighthouse's default mobile settings in /usr/bin/chromium
 * (offline), once in the light and once in the dark colour scheme (the app has both, design
 * tokens in src/styles/tokens.css, so contrast is checked in each), and exits 1 when any score is
 * below 100. Run with `npm run audit:public`; kept out of
 * `npm test` because one page takes seconds.
 */
const ROOT = path.resolve(import.meta.dirname, '..');
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const PAGES = ['/', '/login', '/register', '/privacy', '/tos', '/faq'];
const CATEGORIES = ['accessibility', 'seo'] as const;

type Scheme = 'light' | 'dark';

interface PageResult {
  page: string;
  scheme: Scheme;
  /** Where Lighthouse ended up: a redirect (e.g. to sign-in) would mean the page was not audited. */
  landed: string;
  scores: Record<(typeof CATEGORIES)[number], number>;
  failing: string[];
}

async function audit(siteUrl: string, scheme: Scheme): Promise<PageResult[]> {
  const { default: lighthouse } = await import('lighthouse');
  const { launch } = await import('chrome-launcher');
  const chrome = await launch({ chromePath: CHROMIUM, chromeFlags: ['--headless=new', '--no-sandbox', '--disable-gpu', ...(scheme === 'dark' ? ['--force-dark-mode'] : [])] });
  try {
    const results: PageResult[] = [];
    for (const page of PAGES) {
      const run = await lighthouse(`${siteUrl}${page}`, { port: chrome.port, onlyCategories: [...CATEGORIES], formFactor: 'mobile', logLevel: 'error' });
      const lhr = run?.lhr;
      if (!lhr) throw new Error(`Lighthouse returned nothing for ${page}`);
      if (lhr.runtimeError) throw new Error(`Lighthouse could not load ${page}: ${lhr.runtimeError.message}`);
      const scores = { accessibility: 0, seo: 0 };
      const failing: string[] = [];
      for (const category of CATEGORIES) {
        scores[category] = Math.round((lhr.categories[category]?.score ?? 0) * 100);
        for (const ref of lhr.categories[category]?.auditRefs ?? []) {
          const a = lhr.audits[ref.id];
          if (ref.weight > 0 && a && a.score !== null && a.score < 1) failing.push(`${a.id}: ${a.title}`);
        }
      }
      results.push({ page, scheme, landed: new URL(lhr.finalDisplayedUrl).pathname, scores, failing });
    }
    return results;
  } finally {
    chrome.kill();
  }
}

function table(results: PageResult[]): string {
  const lines = ['| page | scheme | landed on | accessibility | SEO | audits below full marks |', '|---|---|---|---|---|---|'];
  for (const r of results) lines.push(`| ${r.page} | ${r.scheme} | ${r.landed} | ${r.scores.accessibility} | ${r.scores.seo} | ${r.failing.join('; ') || '—'} |`);
  return lines.join('\n');
}

async function main(): Promise<number> {
  if (!fs.existsSync(CHROMIUM)) {
    console.error(`needs Chromium at ${CHROMIUM} (set CHROMIUM_PATH)`);
    return 2;
  }
  if (buildIsStale(ROOT) && buildWebApp(ROOT, { quiet: true }) !== 0) throw new Error('the web app did not build');
  const server = await startServer({ STASH_ROLES: 'site,api,files' });
  try {
    const results = [...(await audit(server.siteUrl, 'light')), ...(await audit(server.siteUrl, 'dark'))];
    console.log(table(results));
    const below = results.filter((r) => r.landed !== r.page || CATEGORIES.some((c) => r.scores[c] < 100));
    if (below.length > 0) {
      console.error(`\nbelow 100 or redirected: ${below.map((r) => `${r.page} (${r.scheme})`).join(', ')}`);
      return 1;
    }
    console.log('\nall public pages, light and dark: accessibility 100, SEO 100');
    return 0;
  } finally {
    await server.stop();
  }
}

process.exitCode = await main();
