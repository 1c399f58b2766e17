import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import negotiate from '@fastify/accept-negotiator';
import type { FastifyInstance } from 'fastify';
import type { RuntimeConfig } from '../../contract/site.ts';

/** Written by `npm run build` (scripts/prerender.mjs): the public pages' markup, with placeholders. */
interface Prerendered {
  placeholders: { siteName: string; communityUrl: string; contactEmail: string };
  pages: Record<string, { title: string; variants: Record<string, string>; withoutWalletsOnly: boolean }>;
}

type PageConfig = Pick<RuntimeConfig, 'siteName' | 'communityUrl' | 'contactEmail' | 'donationWallets'>;

const ROOT_ELEMENT = '<div id="root"></div>';

/** Safe in text and in a quoted attribute alike: the config's values go into both. */
function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/**
 * The shell with each public page already inside its root element, for this deployment's
 * `/config.json` values, by pathname. Empty when the build has no prerendered markup (an older
 * build, or a shell without the root element): those paths then get the plain shell as every
 * other route does, and so does a page that lists donation wallets when some are configured.
 */
export function prerenderedPages(distDir: string, shell: string, config: PageConfig): Map<string, string> {
  const pages = new Map<string, string>();
  const file = path.join(distDir, 'prerender', 'pages.json');
  if (!fs.existsSync(file) || !shell.includes(ROOT_ELEMENT)) return pages;
  const built = JSON.parse(fs.readFileSync(file, 'utf8')) as Prerendered;
  const { placeholders } = built;
  const values = new Map([
    [placeholders.siteName, escapeHtml(config.siteName)],
    [placeholders.communityUrl, escapeHtml(config.communityUrl ?? '')],
    [placeholders.contactEmail, escapeHtml(config.contactEmail ?? '')],
  ]);
  // One pass, so a value that happens to spell another placeholder stays as written; and a
  // replacer function, not a string, so a `$&` or `$'` in the configured text does too.
  const anyPlaceholder = new RegExp([...values.keys()].map((p) => p.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|'), 'g');
  const fill = (text: string) => text.replace(anyPlaceholder, (placeholder) => values.get(placeholder) ?? placeholder);
  const variant = `${Number(Boolean(config.communityUrl))}${Number(Boolean(config.contactEmail))}`;
  for (const [pathname, page] of Object.entries(built.pages)) {
    if (page.withoutWalletsOnly && config.donationWallets.length > 0) continue;
    const body = page.variants[variant];
    if (body === undefined) continue;
    // The title the app gives the page (app/page-titles.ts), for crawlers and share previews.
    const html = shell
      .replace(/<title>[^<]*<\/title>/, () => `<title>${fill(escapeHtml(page.title))}</title>`)
      .replace(ROOT_ELEMENT, () => `<div id="root">${fill(body)}</div>`);
    pages.set(pathname, html);
  }
  return pages;
}

/**
 * Issue 9: each public page is answered with its content already in the HTML, so the first paint
 * needs no JavaScript; main.tsx hydrates those nodes instead of rendering anew, so they stay.
 * Compressed once here, as the build's own files are (design §11).
 */
export function registerPrerendered(app: FastifyInstance, pages: Map<string, string>): void {
  for (const [pathname, html] of pages) {
    const encoded = {
      br: zlib.brotliCompressSync(html, { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 11 } }),
      gzip: zlib.gzipSync(html, { level: 9 }),
      identity: Buffer.from(html),
    };
    const etag = `"${crypto.createHash('sha256').update(html).digest('base64url').slice(0, 27)}"`;
    app.get(pathname, (request, reply) => {
      reply.header('cache-control', 'no-cache').header('vary', 'accept-encoding').header('etag', etag).type('text/html; charset=utf-8');
      if (request.headers['if-none-match']?.split(/\s*,\s*/).includes(etag)) return reply.status(304).send();
      const encoding = negotiate(request.headers['accept-encoding'] ?? '', ['br', 'gzip', 'identity']) ?? 'identity';
      if (encoding !== 'identity') reply.header('content-encoding', encoding);
      return reply.send(encoded[encoding]);
    });
  }
}
