import type { FastifyInstance } from 'fastify';
import type { Config } from '../config.ts';

/** Where each captcha provider loads its script, frame and checks from (design §11). */
const CAPTCHA_ORIGINS = {
  hcaptcha: ['https://hcaptcha.com', 'https://*.hcaptcha.com'],
  turnstile: ['https://challenges.cloudflare.com'],
} as const;

function originOf(url: string): string {
  return new URL(url).origin;
}

/**
 * The site's Content-Security-Policy (design §11, issue 8 item 11). The session token lives in
 * localStorage, so any script that runs on the site can take it: scripts come from this origin
 * only (no inline script, no eval), plus a captcha provider's only when that provider is
 * configured. The app talks to the API and files origins and nothing else (Sentry's ingest only
 * with a DSN). Inline styles stay allowed: React's `style` props, the toast library and the
 * captcha widgets set them, and a style cannot read the token.
 */
export function contentSecurityPolicy(config: Config): string {
  const captcha = (['hcaptcha', 'turnstile'] as const).filter((p) => config.captcha[p].secret && config.captcha[p].siteKey).flatMap((p) => CAPTCHA_ORIGINS[p]);
  const api = originOf(config.urls.api);
  const files = originOf(config.urls.files);
  const sentry = config.sentryDsn ? [originOf(config.sentryDsn)] : [];
  const directives: Record<string, string[]> = {
    'default-src': ["'self'"],
    'script-src': ["'self'", ...captcha],
    'style-src': ["'self'", "'unsafe-inline'", ...captcha],
    'img-src': ["'self'", 'data:', 'blob:', files],
    'media-src': ["'self'", 'blob:', files],
    'font-src': ["'self'", 'data:'],
    'connect-src': ["'self'", api, files, ...captcha, ...sentry],
    'frame-src': captcha.length > 0 ? [...captcha] : ["'none'"],
    'worker-src': ["'self'"],
    'manifest-src': ["'self'"],
    'object-src': ["'none'"],
    'base-uri': ["'self'"],
    'form-action': ["'self'"],
    'frame-ancestors': ["'none'"],
  };
  return Object.entries(directives)
    .map(([name, values]) => `${name} ${[...new Set(values)].join(' ')}`)
    .join('; ');
}

/**
 * Headers on every answer of the site origin (design §11), and source maps only when the
 * operator sets SERVE_SOURCE_MAPS=true: they hand out the whole unminified client.
 */
export function registerSecurityHeaders(app: FastifyInstance, config: Config): void {
  const csp = contentSecurityPolicy(config);
  app.addHook('onRequest', async (request, reply) => {
    if (!config.serveSourceMaps && /\.map$/i.test(decodedPath(request.url))) {
      return reply.status(404).type('text/plain').send('Not found.');
    }
  });
  app.addHook('onSend', async (_request, reply, payload) => {
    void reply
      .header('content-security-policy', csp)
      .header('x-content-type-options', 'nosniff')
      .header('x-frame-options', 'DENY')
      .header('referrer-policy', 'strict-origin-when-cross-origin')
      .header('cross-origin-opener-policy', 'same-origin')
      .header('permissions-policy', 'camera=(), microphone=(), geolocation=(), payment=()');
    return payload;
  });
}

/**
 * The path as the static server resolves it: it decodes before it looks, so "/sw.js%2Emap" was
 * the map, served past a check on the raw URL. A path that does not decode finds no file either.
 */
function decodedPath(url: string): string {
  const raw = url.split('?')[0] ?? '';
  try {
    return decodeURIComponent(raw);
  } catch {
    return raw;
  }
}
