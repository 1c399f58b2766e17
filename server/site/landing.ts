import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import negotiate from '@fastify/accept-negotiator';
import type { FastifyInstance } from 'fastify';
import type { RuntimeConfig } from '../../contract/site.ts';

/** Written by `npm run build` (scripts/prerender.mjs): the landing page's markup, with placeholders. */
interface Prerendered {
  placeholders: { siteName: string; communityUrl: string };
  withCommunity: string;
  withoutCommunity: string;
}

const ROOT_ELEMENT = '<div id="root"></div>';

/** Safe in text and in a quoted attribute alike: the config's values go into both. */
function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/**
 * The shell with the landing page already inside its root element, for this deployment's
 * `/config.json` values; null when the build has no prerendered markup (an older build, or a
 * shell without the root element), and `/` then gets the plain shell as every other route does.
 */
export function landingPage(distDir: string, shell: string, config: Pick<RuntimeConfig, 'siteName' | 'communityUrl'>): string | null {
  const file = path.join(distDir, 'prerender', 'landing.json');
  if (!fs.existsSync(file) || !shell.includes(ROOT_ELEMENT)) return null;
  const markup = JSON.parse(fs.readFileSync(file, 'utf8')) as Prerendered;
  const { placeholders } = markup;
  const siteName = escapeHtml(config.siteName);
  const communityUrl = escapeHtml(config.communityUrl ?? '');
  // Replacer functions, not strings: a `$&` or `$'` in the configured text must stay as written.
  const body = (config.communityUrl ? markup.withCommunity : markup.withoutCommunity)
    .replaceAll(placeholders.siteName, () => siteName)
    .replaceAll(placeholders.communityUrl, () => communityUrl);
  // main.tsx sets the same title once the app starts; a crawler or a share preview sees it now.
  return shell.replace(/<title>[^<]*<\/title>/, () => `<title>${siteName}</title>`).replace(ROOT_ELEMENT, () => `<div id="root">${body}</div>`);
}

/**
 * Issue 9: `/` is answered with the landing page already in its HTML, so the first paint needs
 * no JavaScript; main.tsx hydrates those nodes instead of rendering anew, so they stay.
 * Compressed once here, as the build's own files are (design §11).
 */
export function registerLanding(app: FastifyInstance, html: string): void {
  const encoded = {
    br: zlib.brotliCompressSync(html, { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 11 } }),
    gzip: zlib.gzipSync(html, { level: 9 }),
    identity: Buffer.from(html),
  };
  const etag = `"${crypto.createHash('sha256').update(html).digest('base64url').slice(0, 27)}"`;
  app.get('/', (request, reply) => {
    reply.header('cache-control', 'no-cache').header('vary', 'accept-encoding').header('etag', etag).type('text/html; charset=utf-8');
    if (request.headers['if-none-match']?.split(/\s*,\s*/).includes(etag)) return reply.status(304).send();
    const encoding = negotiate(request.headers['accept-encoding'] ?? '', ['br', 'gzip', 'identity']) ?? 'identity';
    if (encoding !== 'identity') reply.header('content-encoding', encoding);
    return reply.send(encoded[encoding]);
  });
}
