import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify';
import cors from '@fastify/cors';
import rateLimit from '@fastify/rate-limit';
import type { Deps } from './deps.ts';
import { registerErrorHandler } from './http/error-handler.ts';
import { answerClientError, answerFrameworkError } from './http/client-error.ts';
import { registerAccountModules } from './modules/account-modules.ts';
import { registerFileModules } from './modules/file-modules.ts';
import { registerFilesHost } from './files-host/files-host.ts';
import { registerSite } from './site/site.ts';

function baseOptions(deps: Deps): FastifyServerOptions {
  return {
    logger: deps.config.logLevel === 'silent' ? false : { level: deps.config.logLevel },
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

async function healthz(app: FastifyInstance, deps: Deps): Promise<void> {
  // Polled every few seconds by load balancers and orchestrators: not worth a log line each time.
  app.get('/healthz', { logLevel: 'warn' }, async (_req, reply) => {
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
  registerErrorHandler(app);
  await app.register(cors, {
    origin: new URL(deps.config.urls.site).origin,
    methods: ['GET', 'POST'],
    allowedHeaders: ['Content-Type', 'Authorization'],
    maxAge: 600,
  });
  await app.register(rateLimit, {
    global: true,
    max: 300,
    timeWindow: '1 minute',
    // Counted after the caller is known (preHandler), so a signed-in user is limited as an
    // account across addresses and an anonymous client by its address (design §6).
    hook: 'preHandler',
    keyGenerator: (request) => (request.caller ? `user:${request.caller.id}` : `ip:${request.ip}`),
    allowList: () => !deps.config.rateLimits,
    // Several API processes (README "Deployment at scale") must count against one limit, so with
    // REDIS_URL the counters live in Redis; one process alone keeps them in memory.
    ...(deps.redis ? { redis: deps.redis, nameSpace: deps.rateLimitNamespace } : {}),
    // Fail open: while Redis is unreachable requests go through unlimited (server/redis.ts logs
    // the outage once) rather than every API call failing with a 500 for a missing counter.
    skipOnError: true,
    errorResponseBuilder: (_req, ctx) => ({
      statusCode: 429,
      success: false,
      error: `Too many requests. Try again in ${Math.ceil(ctx.ttl / 1000)} seconds.`,
    }),
  });
  app.decorateRequest('caller', null);
  await healthz(app, deps);
  await registerAccountModules(app, deps);
  await registerFileModules(app, deps);
  return app;
}

/** The files origin (design §8): `GET`/`HEAD /<actual_name>`. */
export async function buildFilesHost(deps: Deps): Promise<FastifyInstance> {
  const app = Fastify(baseOptions(deps));
  registerErrorHandler(app);
  await healthz(app, deps);
  await registerFilesHost(app, deps);
  return app;
}

/** The site origin (design §2): the built PWA with SPA fallback and `/config.json`. */
export async function buildSite(deps: Deps, distDir?: string): Promise<FastifyInstance> {
  const app = Fastify(baseOptions(deps));
  // Same answers as the other origins for anything that fails (generic 500, logged).
  registerErrorHandler(app, { jsonNotFound: false });
  await healthz(app, deps);
  await registerSite(app, deps, distDir);
  return app;
}
