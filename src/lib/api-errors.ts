// The failure side of lib/api-client.ts, apart from axios so a public page can tell failures
// apart without downloading the HTTP client (issue 9: < 60 KiB of JavaScript for `/`).
import type { AxiosError } from 'axios';

/** What axios.isAxiosError checks, without importing axios. */
function isAxiosError(err: unknown): err is AxiosError {
  return typeof err === 'object' && err !== null && (err as { isAxiosError?: unknown }).isAxiosError === true;
}

/**
 * Every failed call becomes one of these (style habit 6: errors in one place). `message` is the
 * server's readable text when it sent one (spec §8: `error` as text, or an object with `error`
 * or `message`, or `message`), else axios' own text.
 */
export class ApiError extends Error {
  readonly status: number;
  readonly code?: string;
  /** True when `message` came from the server's body, so it may be shown to the user as is. */
  readonly fromServer: boolean;
  /** The body's `success` field when the server answered with one (spec §4 acts on `false`). */
  readonly success?: boolean;
  /**
   * The answer's Retry-After as sent (a 503 while its database or store is down), read where it
   * is acted on (use-retry-unreachable.ts): parsing it here would put the queue's parser in the
   * first load of every public page.
   */
  readonly retryAfter?: string;

  constructor(message: string, opts: { status: number; code?: string; fromServer: boolean; success?: boolean; retryAfter?: string }) {
    super(message);
    this.name = 'ApiError';
    this.status = opts.status;
    this.code = opts.code;
    this.fromServer = opts.fromServer;
    this.success = opts.success;
    this.retryAfter = opts.retryAfter;
  }
}

/** Spec §8: error (text, or an object with error or message) or message. */
export function serverText(data: unknown): string | undefined {
  if (!data || typeof data !== 'object') return undefined;
  const { error, message } = data as { error?: unknown; message?: unknown };
  if (typeof error === 'string' && error) return error;
  if (error && typeof error === 'object') {
    const inner = error as { error?: unknown; message?: unknown };
    if (typeof inner.error === 'string' && inner.error) return inner.error;
    if (typeof inner.message === 'string' && inner.message) return inner.message;
  }
  if (typeof message === 'string' && message) return message;
  return undefined;
}

/** A response header by name, whatever its case: AxiosHeaders answers get(), a plain object by key. */
function headerOf(headers: unknown, name: string): unknown {
  if (!headers || typeof headers !== 'object') return undefined;
  const get = (headers as { get?: unknown }).get;
  if (typeof get === 'function') return (get as (n: string) => unknown).call(headers, name);
  return (headers as Record<string, unknown>)[name];
}

export function toApiError(err: unknown): ApiError {
  if (err instanceof ApiError) return err;
  if (isAxiosError(err)) {
    const e = err;
    const data = e.response?.data;
    const text = serverText(data);
    const success = data && typeof data === 'object' && 'success' in data ? Boolean((data as { success: unknown }).success) : undefined;
    const header = headerOf(e.response?.headers, 'retry-after');
    const retryAfter = typeof header === 'string' ? header : undefined;
    return new ApiError(text ?? e.message, { status: e.response?.status ?? 0, code: e.code, fromServer: text !== undefined, success, retryAfter });
  }
  return new ApiError(err instanceof Error ? err.message : String(err), { status: 0, fromServer: false });
}

/** A call that got no answer at all (offline, refused, dropped): worth trying again by itself. */
export function isNoAnswer(err: unknown): boolean {
  return err instanceof ApiError && err.status === 0 && !err.fromServer;
}

/**
 * An answer that says "not now" rather than "no": the server's database or store is down (503,
 * with Retry-After), or a proxy in front found no server to ask (502, 504, as while it restarts).
 * The same request works once it is back, so a screen tries it again by itself.
 */
export function isTemporary(err: unknown): err is ApiError {
  return err instanceof ApiError && (err.status === 502 || err.status === 503 || err.status === 504);
}

/** The text to show for a failure: the server's own words when it gave some, else the spec's fallback. */
export function errorMessage(err: unknown, fallback: string): string {
  const e = toApiError(err);
  return e.fromServer ? e.message : fallback;
}
