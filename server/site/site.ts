import fs from 'node:fs';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import fastifyStatic from '@fastify/static';
import type { Deps } from '../deps.ts';
import { CHUNK_SIZE } from '../../contract/files.ts';
import type { RuntimeConfig } from '../../contract/site.ts';
import { isClientRoute } from '../../contract/site-routes.ts';
import { prerenderedPages, registerPrerendered } from './prerendered.ts';
import { registerShareFallback } from './share-fallback.ts';

export function runtimeConfig(deps: Deps): RuntimeConfig {
  const { config } = deps;
  // A widget is shown only for a provider the server will verify (design §4: on when its secret is set).
  const key = (p: 'hcaptcha' | 'turnstile') => (config.captcha[p].secret ? config.captcha[p].siteKey : null);
  return {
    apiUrl: config.urls.api,
    filesUrl: config.urls.files,
    siteName: config.siteName,
    communityUrl: config.communityUrl,
    hcaptchaSiteKey: key('hcaptcha'),
    turnstileSiteKey: key('turnstile'),
    sentryDsn: config.sentryDsn,
    chunkSize: CHUNK_SIZE,
    donationWallets: config.donationWallets.map(({ label, address }) => ({ label, address })),
    contactEmail: config.contactEmail,
  };
}

export const DIST_DIR = path.resolve(import.meta.dirname, '../../dist');

export async function registerSite(app: FastifyInstance, deps: Deps, distDir = DIST_DIR): Promise<void> {
  await app.register(registerShareFallback);
  const config = runtimeConfig(deps);
  const body = JSON.stringify(config);
  app.get('/config.json', async (_req, reply) =>
    reply.header('content-type', 'application/json; charset=utf-8').header('cache-control', 'no-cache').send(body),
  );
  const index = path.join(distDir, 'index.html');
  if (!fs.existsSync(index)) {
    app.log.warn(`${index} is missing: run \`npm run build\` to serve the web app`);
    app.setNotFoundHandler((_req, reply) => reply.status(503).type('text/plain').send('The web app has not been built yet: run `npm run build`.'));
    return;
  }
  registerPrerendered(app, prerenderedPages(distDir, fs.readFileSync(index, 'utf8'), config));
  await app.register(fastifyStatic, {
    root: distDir,
    // Design §11: the build's .br/.gz twins (vite.config.ts), chosen by Accept-Encoding, with Vary.
    preCompressed: true,
    // Hashed assets never change; the shell and service worker must be revalidated.
    setHeaders(res, filePath) {
      if (/[/\\]assets[/\\]/.test(filePath)) res.header('cache-control', 'public, max-age=31536000, immutable');
      else res.header('cache-control', 'no-cache');
    },
  });
  // SPA fallback: a GET is answered with the shell, which renders the route. A path that is no
  // route gets the same shell (its 'Page Not Found' screen) with a 404, so crawlers and link
  // checkers see it is missing (issue 11 item 10).
  app.setNotFoundHandler((request, reply) => {
    if (request.method !== 'GET' && request.method !== 'HEAD') return reply.status(404).send();
    if (!isClientRoute(request.url)) reply.status(404);
    return reply.header('cache-control', 'no-cache').sendFile('index.html');
  });
}
