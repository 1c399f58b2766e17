import { STORE_UNAVAILABLE, StorageError } from './storage.ts';

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
