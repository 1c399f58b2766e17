import { HttpError } from '../http/errors.ts';

/**
 * A failure of the object store, answered with the design §5 shape by the one error handler
 * (it is an HttpError): 503 when trying again later can help (unreachable, throttled, 5xx),
 * 500 when the operator must fix the configuration (missing bucket, access denied). The
 * driver logs the store's own words; the client gets a sentence it can act on.
 */
export class StorageError extends HttpError {
  constructor(
    statusCode: 500 | 503,
    message: string,
    readonly detail: string,
  ) {
    super(statusCode, message, statusCode === 503 ? { retry: true } : {}, statusCode === 503 ? { 'retry-after': '5' } : {});
    this.name = 'StorageError';
  }
}

export const STORE_UNAVAILABLE = 'The file store is unavailable right now; please try again shortly.';
const MISCONFIGURED = 'The file store refused the request; the site operator must check its storage settings.';

interface SdkErrorShape {
  name?: string;
  code?: string;
  message?: string;
  $metadata?: { httpStatusCode?: number };
}

const CONFIG_ERRORS = new Set(['NoSuchBucket', 'AccessDenied', 'InvalidAccessKeyId', 'SignatureDoesNotMatch', 'AllAccessDisabled', 'Forbidden']);

/** What an SDK error means for a client: a StorageError with a log-worthy detail. */
export function classifyStoreError(err: unknown, action: string): StorageError {
  if (err instanceof StorageError) return err;
  const e = (err ?? {}) as SdkErrorShape;
  const name = e.name ?? e.code ?? 'Error';
  const status = e.$metadata?.httpStatusCode;
  const detail = `${action}: ${name}${status ? ` (HTTP ${status})` : ''}: ${e.message ?? String(err)}`;
  if (CONFIG_ERRORS.has(name) || status === 403) return new StorageError(500, MISCONFIGURED, detail);
  return new StorageError(503, STORE_UNAVAILABLE, detail);
}

export function isNotFound(err: unknown): boolean {
  const e = (err ?? {}) as SdkErrorShape;
  return e.name === 'NotFound' || e.name === 'NoSuchKey' || e.name === 'NoSuchUpload' || (e.$metadata?.httpStatusCode === 404 && e.name !== 'NoSuchBucket');
}
