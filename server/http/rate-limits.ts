import crypto from 'node:crypto';
import rateLimit from '@fastify/rate-limit';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Deps } from '../deps.ts';
import { HttpError } from './errors.ts';

/** A limit: `max` requests per `timeWindow` (milliseconds or '1 minute'). */
export interface Limit {
  max: number;
  timeWindow: string | number;
}

/** Design §6: everything not limited more strictly, per account and per client IP. */
export const GENERAL_LIMIT: Limit = { max: 300, timeWindow: '1 minute' };

type AccountLimiter = (request: FastifyRequest) => Promise<void>;

declare module 'fastify' {
  interface FastifyInstance {
    /** Makes a per-account limiter; decorated by registerRateLimits, inherited by child scopes. */
    stashAccountLimiter?: (limit: Limit, scope: string) => AccountLimiter;
  }
}

/**
 * Design §6, §11: keys that hold an IP are hashed with a secret salt (so a dump of the counters
 * names no address) and live only as long as their window (the stores expire them). With Redis
 * the salt is shared by every API process through one `SET NX`, so they still count together.
 */
export async function ipSalt(deps: Deps): Promise<string> {
  const fresh = crypto.randomBytes(16).toString('hex');
  if (!deps.redis) return fresh;
  try {
    const key = `${deps.rateLimitNamespace}salt`;
    await deps.redis.set(key, fresh, 'NX');
    return (await deps.redis.get(key)) ?? fresh;
  } catch {
    // Redis away at start: this process counts alone until it is back (fail open, server/redis.ts).
    return fresh;
  }
}

export function hashedIpKey(salt: string, ip: string): string {
  return `ip:${crypto.createHmac('sha256', salt).update(ip).digest('base64url').slice(0, 22)}`;
}

export function tooMany(ttlSeconds: number): HttpError {
  return new HttpError(429, `Too many requests. Try again in ${ttlSeconds} seconds.`, {}, { 'retry-after': String(ttlSeconds) });
}

/**
 * Registers the limiter on one origin. It counts on `onRequest`, before the body is read and
 * before any credential is looked at, so a refused request (401, 400, 413) counts as much as an
 * accepted one and no header can change which counter a request lands in (issue 8 item 6).
 * Routes may set a stricter per-IP limit (`config.rateLimit`, e.g. login); per-account limits
 * run after authentication through `accountLimit`.
 */
export async function registerRateLimits(app: FastifyInstance, deps: Deps, perIp: Limit): Promise<void> {
  const salt = await ipSalt(deps);
  await app.register(rateLimit, {
    global: true,
    ...perIp,
    hook: 'onRequest',
    keyGenerator: (request) => hashedIpKey(salt, request.ip),
    allowList: () => !deps.config.rateLimits,
    // Several API processes (README "Deployment at scale") must count against one limit, so with
    // REDIS_URL the counters live in Redis; one process alone keeps them in memory.
    ...(deps.redis ? { redis: deps.redis, nameSpace: deps.rateLimitNamespace } : {}),
    // Fail open: while Redis is unreachable requests go through unlimited (server/redis.ts logs
    // the outage once) rather than every call failing with a 500 for a missing counter.
    skipOnError: true,
    errorResponseBuilder: (_req, ctx) => ({
      statusCode: 429,
      success: false,
      error: `Too many requests. Try again in ${Math.ceil(ctx.ttl / 1000)} seconds.`,
    }),
  });
  const make = (limit: Limit, scope: string): AccountLimiter => {
    const check = app.createRateLimit({ ...limit, keyGenerator: (request) => `user:${request.caller?.id ?? ''}:${scope}` });
    return async (request) => {
      if (!request.caller) return;
      const result = await check(request);
      if (!result.isAllowed && result.isExceeded) throw tooMany(result.ttlInSeconds);
    };
  };
  app.decorate('stashAccountLimiter', make);
  // Every call of a signed-in caller also counts against the account (design §6), wherever it
  // comes from; this runs once the caller is known and the body was accepted.
  app.addHook('preHandler', make(GENERAL_LIMIT, 'all'));
}

/** A per-account limiter for one scope (design §6: 300/min per account, invites 10/min). */
export function accountLimit(app: FastifyInstance, limit: Limit, scope: string): AccountLimiter {
  // An origin without limits registered limits nothing.
  return app.stashAccountLimiter ? app.stashAccountLimiter(limit, scope) : async () => {};
}
