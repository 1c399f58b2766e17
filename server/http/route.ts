import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Static, TSchema } from 'typebox';
import type { Endpoint } from '../../contract/common.ts';
import type { Deps } from '../deps.ts';
import { findCaller, type Caller } from '../modules/auth/caller.repository.ts';
import { HttpError, MESSAGES, badRequest, forbidden, unauthorized } from './errors.ts';
import { findUnstorableText } from './text-check.ts';
import { accountLimit, type Limit } from './rate-limits.ts';

/**
 * Who may call a route (spec §6, design §6):
 * - `public`: anyone; a caller is resolved when a credential is present.
 * - `user`: any signed-in, unbanned user; `staff`: mod or admin; `admin`: admin only.
 */
export type Access = 'public' | 'user' | 'staff' | 'admin';

export interface RouteOptions {
  access: Access;
  /** API keys may authenticate this route (uploads and own files only, design §6). */
  apiKey?: boolean;
  /** Stays open during maintenance (login and auth/data, design §6). */
  openInMaintenance?: boolean;
  /**
   * A stricter limit for this route (design §6): `ip` counts every request from a client
   * address before anything else is read (login, register); `account` counts the signed-in
   * caller's accepted calls (invite generation). The general limits apply either way.
   */
  rateLimit?: Limit & { per: 'ip' | 'account' };
}

export interface HandlerContext<B> {
  body: B;
  caller: Caller | null;
  request: FastifyRequest;
  reply: FastifyReply;
}

export interface AuthedContext<B> extends HandlerContext<B> {
  caller: Caller;
}

declare module 'fastify' {
  interface FastifyRequest {
    caller: Caller | null;
  }
  interface FastifyContextConfig {
    /** Who may call the route: read again when its body cannot be parsed (refusedBeforeBody). */
    access?: RouteOptions;
  }
}

/** The credential in `Authorization: Bearer <token or API key>` (design §5), if any. */
export function bearerOf(request: FastifyRequest): string | null {
  const m = /^Bearer\s+(\S+)$/i.exec(request.headers.authorization ?? '');
  return m?.[1] ?? null;
}

/** The credential a request carries: `token` in a JSON body, else `Authorization: Bearer`. */
export function credentialOf(request: FastifyRequest): string | null {
  const body = request.body as Record<string, unknown> | null | undefined;
  if (body && typeof body === 'object' && typeof body.token === 'string' && body.token !== '') return body.token;
  return bearerOf(request);
}

const RANK: Record<Caller['role'], number> = { default: 0, trusted: 1, mod: 2, admin: 3 };

/**
 * Resolves and checks the caller in the order design §5 fixes: 401 (no or bad credential),
 * then 403 (ban, role, API key where none is allowed), then 503 maintenance; the body is
 * validated only after this (400).
 */
export async function authorize(deps: Deps, credential: string | null, options: RouteOptions): Promise<Caller | null> {
  let caller: Caller | null = null;
  if (credential) caller = await findCaller(deps.db, credential);
  if (options.access !== 'public') {
    if (!credential) throw unauthorized(MESSAGES.signInRequired);
    if (!caller) throw unauthorized(MESSAGES.sessionExpired);
    if (caller.banned) throw forbidden(MESSAGES.banned);
    if (caller.via === 'apikey' && !options.apiKey) throw forbidden('API keys cannot be used for this call.');
    const need = options.access === 'admin' ? RANK.admin : options.access === 'staff' ? RANK.mod : 0;
    if (RANK[caller.role] < need) throw forbidden(MESSAGES.notAuthorized);
  }
  if (!options.openInMaintenance && caller?.role !== 'admin') {
    const settings = await deps.settings.get();
    if (settings.maintenance_mode) throw new HttpError(503, MESSAGES.maintenance);
  }
  return caller;
}

/**
 * Design §5 when the body could not even be parsed (malformed JSON, too large, `__proto__`):
 * the only credential left is the Bearer header, and the route's access is checked with it
 * first, so a caller without a valid credential gets 401 and one without the role 403 — never a
 * 400 that tells a stranger about the body. Returns the refusal, or null when the body's own
 * error stands.
 */
export async function refusedBeforeBody(deps: Deps, request: FastifyRequest): Promise<HttpError | null> {
  const options = request.routeOptions.config?.access;
  if (!options) return null;
  try {
    await authorize(deps, bearerOf(request), options);
    return null;
  } catch (err) {
    if (err instanceof HttpError) return err;
    throw err;
  }
}

type Handler<B, R, A extends Access> = (
  ctx: A extends 'public' ? HandlerContext<B> : AuthedContext<B>,
) => Promise<R>;

/** Registers a POST route of the contract (spec §7: every call is a POST). */
export function post<BS extends TSchema, RS extends TSchema, A extends Access, P extends string>(
  app: FastifyInstance,
  deps: Deps,
  ep: Endpoint<BS, RS, P>,
  options: RouteOptions & { access: A },
  handler: Handler<Static<BS>, Static<RS>, A>,
): void {
  const limit = options.rateLimit;
  const perAccount = limit?.per === 'account' ? accountLimit(app, limit, ep.path) : null;
  app.post(
    ep.path,
    {
      schema: { body: ep.body },
      config: { access: options, ...(limit?.per === 'ip' ? { rateLimit: { max: limit.max, timeWindow: limit.timeWindow } } : {}) },
      // preValidation: after the body is parsed (the token lives in it) but before it is
      // validated, so 401/403 come before 400 (design §5).
      preValidation: async (request) => {
        request.caller = await authorize(deps, credentialOf(request), options);
        if (perAccount) await perAccount(request);
        // Before ajv, so no schema has to repeat it: text no database can hold is a 400 (design §5).
        const bad = findUnstorableText(request.body);
        if (bad !== null) throw badRequest(`${bad ? `Field '${bad}'` : 'The request body'} contains a character that is not allowed (NUL or a broken surrogate).`);
      },
    },
    async (request, reply) => {
      const ctx = { body: request.body as Static<BS>, caller: request.caller, request, reply };
      return handler(ctx as A extends 'public' ? HandlerContext<Static<BS>> : AuthedContext<Static<BS>>);
    },
  );
}
