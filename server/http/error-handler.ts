import type { FastifyError, FastifyInstance, FastifyRequest } from 'fastify';
import { isDatabaseUnavailable } from '../db/unavailable.ts';
import { HttpError } from './errors.ts';

interface ValidationIssue {
  instancePath?: string;
  keyword?: string;
  message?: string;
  params?: Record<string, unknown>;
}

/** Turns ajv's findings into one sentence a person can act on. */
export function describeValidation(issues: ValidationIssue[]): string {
  const first = issues[0];
  if (!first) return 'Invalid request.';
  const field = (first.instancePath ?? '').replace(/^\//, '').replace(/\//g, '.');
  const where = field ? `'${field}'` : 'the request body';
  switch (first.keyword) {
    case 'additionalProperties':
      return `Unknown field '${[field, String(first.params?.additionalProperty ?? '')].filter(Boolean).join('.')}'.`;
    case 'required':
      return `Missing field '${[field, String(first.params?.missingProperty ?? '')].filter(Boolean).join('.')}'.`;
    case 'maxLength':
      return `Field ${where} must be at most ${String(first.params?.limit)} characters.`;
    case 'minLength':
      return Number(first.params?.limit) === 1
        ? `Field ${where} must not be empty.`
        : `Field ${where} must be at least ${String(first.params?.limit)} characters.`;
    case 'pattern':
      return `Field ${where} has characters that are not allowed.`;
    case 'type':
      return field
        ? `Field ${where} must be ${aOrAn(String(first.params?.type))}.`
        : `The request body must be ${aOrAn(String(first.params?.type))}.`;
    case 'anyOf':
    case 'const':
    case 'enum':
      return `Field ${where} has a value that is not allowed.`;
    default:
      return `Field ${where} ${first.message ?? 'is invalid'}.`;
  }
}

function aOrAn(type: string): string {
  const words: Record<string, string> = { object: 'an object', integer: 'a whole number', number: 'a number', string: 'a string', boolean: 'true or false', array: 'a list' };
  return words[type] ?? type;
}

const DATABASE_UNAVAILABLE = 'The database is unavailable right now. Please try again in a moment.';

/** Fastify could not read the body at all: malformed or empty JSON, too large, `__proto__`. */
function isBodyError(err: FastifyError | HttpError): boolean {
  if (err instanceof HttpError) return false;
  return Boolean(err.code?.startsWith('FST_ERR_CTP')) || (err instanceof SyntaxError && err.statusCode === 400);
}

/**
 * The one place errors become answers (style habit 6): client faults keep their message,
 * anything else is logged with context and answered with a generic message.
 */
export function registerErrorHandler(
  app: FastifyInstance,
  options: { jsonNotFound?: boolean; refusedBeforeBody?: (request: FastifyRequest) => Promise<HttpError | null> } = {},
): void {
  app.setErrorHandler(async (err: FastifyError | HttpError, request, reply) => {
    // Design §5 (401 → 403 → 400): a body that could not be parsed still answers to the
    // credential in the Bearer header first.
    if (options.refusedBeforeBody && isBodyError(err)) {
      const refusal = await options.refusedBeforeBody(request);
      if (refusal) err = refusal;
    }
    if (err instanceof HttpError) {
      // The server's own failure behind a readable answer (a store that failed a write): the
      // operator needs its words, which the client is not shown.
      if (err.statusCode >= 500 && err.cause !== undefined) request.log.error({ err: err.cause, url: request.url }, err.message);
      for (const [k, v] of Object.entries(err.headers)) void reply.header(k, v);
      const body = { success: false, error: err.message, ...err.extra };
      // A stream that failed before its first byte (the S3 files host) had already set the file's type.
      return reply.status(err.statusCode).type('application/json; charset=utf-8').send(body);
    }
    if (err.validation) {
      return reply.status(400).send({ success: false, error: describeValidation(err.validation as ValidationIssue[]) });
    }
    const status = err.statusCode ?? 500;
    if (status === 429) {
      return reply.status(429).send({ success: false, error: 'Too many requests. Please slow down and try again shortly.' });
    }
    if (status >= 400 && status < 500) {
      // Fastify's own client errors: malformed JSON, wrong content type, body too large.
      const message =
        err.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE'
          ? 'Unsupported content type: send JSON (or multipart for uploads).'
          : err.code === 'FST_ERR_CTP_BODY_TOO_LARGE'
            ? 'The request body is too large.'
            : err.code === 'FST_ERR_CTP_EMPTY_JSON_BODY'
              ? 'The request body is empty: send a JSON object.'
              : err.code?.startsWith('FST_ERR_CTP') || err instanceof SyntaxError
                ? 'The request body is not valid JSON.'
                : err.message;
      return reply.status(status).send({ success: false, error: message });
    }
    if (isDatabaseUnavailable(err)) {
      // The database restarting, failing over or gone: not the client's doing, and worth asking again.
      request.log.error({ err, url: request.url }, 'database unavailable');
      return reply.status(503).header('retry-after', '5').type('application/json; charset=utf-8').send({ success: false, error: DATABASE_UNAVAILABLE });
    }
    request.log.error({ err, url: request.url }, 'request failed');
    return reply.status(500).type('application/json; charset=utf-8').send({ success: false, error: 'An internal error occurred.' });
  });
  // The site origin answers unknown paths with the SPA shell (server/site/site.ts) instead.
  if (options.jsonNotFound ?? true) app.setNotFoundHandler((_request, reply) => reply.status(404).send({ success: false, error: 'Not found.' }));
}
