import http from 'node:http';
import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify';
import cors from '@fastify/cors';
import type { Deps } from './deps.ts';
import { registerErrorHandler } from './http/error-handler.ts';
import { ipSalt, registerRateLimits, GENERAL_LIMIT } from './http/rate-limits.ts';
import { refusedBeforeBody } from './http/route.ts';
import { recordRoutes } from './http/route-table.ts';
import { capConnectionsPerIp, enforceBodyRate } from './http/slow-clients.ts';
import { logSerializers } from './http/log-privacy.ts';
import { answerClientError, answerFrameworkError } from './http/client-error.ts';
import { registerAccountModules } from './modules/account-modules.ts';
import { registerFileModules } from './modules/file-modules.ts';
import { answerFast, createFilesHost, registerFilesHost } from './files-host/files-host.ts';
import { FilesIpLimiter, limitFilesHost } from './files-host/ip-limiter.ts';
import { registerSite } from './site/site.ts';
import { registerSecurityHeaders } from './site/security-headers.ts';
import { closeGentlyAfterEarlyAnswers } from './http/early-answer.ts';

/** Issue 8 item 5: no request may hold a socket forever (Fastify's default requestTimeout is 0). */
export const TIMEOUTS = {
  /**
   * A whole request, headers and body: only a backstop, as the body-rate check cuts slow bodies
   * much sooner. An 80 MiB chunk (spec §9) on a ~12 KB/s mobile link still fits, and a cut
   * chunk resumes from its stored bytes anyway.
   */
  requestTimeout: 2 * 60 * 60_000,
  /**
   * A socket with no traffic either way for this long is closed. A backstop only: headers must
   * arrive within Node's headersTimeout (60 s) and bodies at MIN_BODY_RATE; long enough that a
   * handler finishing a big upload is never cut while it works.
   */
  connectionTimeout: 10 * 60_000,
  /** The body-rate check's window (the slowest body is MIN_BODY_RATE bytes/s over each). */
  bodyRateWindowMs: 10_000,
};

function baseOptions(deps: Deps): FastifyServerOptions {
  return {
    logger: deps.config.logLevel === 'silent' ? false : { level: deps.config.logLevel, serializers: logSerializers(deps.config.logClientIps) },
    requestTimeout: TIMEOUTS.requestTimeout,
    connectionTimeout: TIMEOUTS.connectionTimeout,
    trustProxy: deps.config.trustProxy,
    // Design §5: never strip unknown fields or coerce types — a wrong body is a 400.
    ajv: { customOptions: { removeAdditional: false, coerceTypes: false, useDefaults: true, allErrors: false } },
    bodyLimit: 1_048_576,
    return503OnClosing: true,
    // Design §5: even a request Node cannot parse gets `{ success: false, error }`.
    clientErrorHandler: answerClientError,
    frameworkErrors: answerFrameworkError,
  };
}

/** Guards every listener against clients that hold sockets open (issue 8 item 5). */
function guardSlowClients(app: FastifyInstance, deps: Deps): void {
  capConnectionsPerIp(app, deps.config.maxConnectionsPerIp);
  enforceBodyRate(app, { maxConnectionsPerIp: deps.config.maxConnectionsPerIp, minBodyBytesPerSecond: deps.config.minBodyRate, bodyRateWindowMs: TIMEOUTS.bodyRateWindowMs });
}

async function healthz(app: FastifyInstance, deps: Deps): Promise<void> {
  // Polled every few seconds by load balancers and orchestrators: not worth a log line each time.
  app.get('/healthz', { logLevel: 'warn', config: { rateLimit: false } }, async (_req, reply) => {
    try {
      await deps.db.selectFrom('roles').select('id').limit(1).execute();
      return { ok: true };
    } catch {
      return reply.status(503).send({ ok: false });
    }
  });
}

/** The API origin (design §2): `/api/v1/*`, CORS open to the site's origin only. */
export async function buildApi(deps: Deps): Promise<FastifyInstance> {
  const app = Fastify(baseOptions(deps));
  recordRoutes(app);
  guardSlowClients(app, deps);
  // Uploads refused midway reach the client (and nginx in front) as Stash's own answers.
  closeGentlyAfterEarlyAnswers(app);
  registerErrorHandler(app, { refusedBeforeBody: (request) => refusedBeforeBody(deps, request) });
  await app.register(cors, {
    origin: new URL(deps.config.urls.site).origin,
    methods: ['GET', 'POST'],
    allowedHeaders: ['Content-Type', 'Authorization'],
    maxAge: 600,
  });
  // Design §6: 300/min per client IP on every call, counted before anything else; login and
  // register set stricter per-IP limits, and signed-in callers also count per account.
  await registerRateLimits(app, deps, GENERAL_LIMIT);
  app.decorateRequest('caller', null);
  await healthz(app, deps);
  await registerAccountModules(app, deps);
  await registerFileModules(app, deps);
  return app;
}

/** The files origin (design §8): `GET`/`HEAD /<actual_name>`. */
export async function buildFilesHost(deps: Deps): Promise<FastifyInstance> {
  const host = createFilesHost();
  const options = baseOptions(deps);
  // Issue 9: cached files are answered before Fastify (files-host.ts answerFast), rate limits
  // included when this process keeps the count (ip-limiter.ts). Counters shared through Redis
  // are asked asynchronously by @fastify/rate-limit, and an address behind a trusted proxy is
  // Fastify's to work out, so those requests all go through Fastify.
  const limiter = deps.config.rateLimits && !deps.redis ? new FilesIpLimiter(await ipSalt(deps), deps.config.filesRateLimit) : null;
  const fast = !deps.config.rateLimits || (limiter !== null && deps.config.trustProxy === false);
  const app: FastifyInstance = Fastify({
    ...options,
    serverFactory: (handler) => {
      // What Fastify does with its own server (fastify/lib/server.js), plus the fast path in front.
      const server = http.createServer((req, res) => {
        if (!fast || !answerFast(deps, host, app.log, req, res, limiter)) handler(req, res);
      });
      server.keepAliveTimeout = 72_000;
      server.requestTimeout = TIMEOUTS.requestTimeout;
      server.setTimeout(TIMEOUTS.connectionTimeout);
      return server;
    },
  });
  guardSlowClients(app, deps);
  registerErrorHandler(app);
  // Design §6: the files host is limited per client IP too (FILES_RATE_LIMIT a minute). With
  // RATE_LIMITS=off the limiter is left out rather than asked on every request (an HMAC of the
  // address each time, issue 9): no route here uses per-account limits.
  if (limiter) limitFilesHost(app, limiter);
  else if (deps.config.rateLimits) await registerRateLimits(app, deps, { max: deps.config.filesRateLimit, timeWindow: '1 minute' });
  await healthz(app, deps);
  await registerFilesHost(app, deps, host);
  return app;
}

/** The site origin (design §2): the built PWA with SPA fallback and `/config.json`. */
export async function buildSite(deps: Deps, distDir?: string): Promise<FastifyInstance> {
  const app = Fastify(baseOptions(deps));
  guardSlowClients(app, deps);
  // A share the service worker did not take arrives with its files (site.ts).
  closeGentlyAfterEarlyAnswers(app);
  // Same answers as the other origins for anything that fails (generic 500, logged).
  registerErrorHandler(app, { jsonNotFound: false });
  // Design §11: CSP, frame and sniffing protection, no source maps unless asked for.
  registerSecurityHeaders(app, deps.config);
  await healthz(app, deps);
  await registerSite(app, deps, distDir);
  return app;
}
