import axios, { type AxiosError } from 'axios';
import type { BodyOf, PathOf, ResponseOf } from '../../contract/common.ts';
import { getRuntimeConfig } from './runtime-config.ts';
import { getToken } from './token.ts';

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

  constructor(message: string, opts: { status: number; code?: string; fromServer: boolean; success?: boolean }) {
    super(message);
    this.name = 'ApiError';
    this.status = opts.status;
    this.code = opts.code;
    this.fromServer = opts.fromServer;
    this.success = opts.success;
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

export function toApiError(err: unknown): ApiError {
  if (err instanceof ApiError) return err;
  if (axios.isAxiosError(err)) {
    const e = err as AxiosError;
    const data = e.response?.data;
    const text = serverText(data);
    const success = data && typeof data === 'object' && 'success' in data ? Boolean((data as { success: unknown }).success) : undefined;
    return new ApiError(text ?? e.message, { status: e.response?.status ?? 0, code: e.code, fromServer: text !== undefined, success });
  }
  return new ApiError(err instanceof Error ? err.message : String(err), { status: 0, fromServer: false });
}

/** The text to show for a failure: the server's own words when it gave some, else the spec's fallback. */
export function errorMessage(err: unknown, fallback: string): string {
  const e = toApiError(err);
  return e.fromServer ? e.message : fallback;
}

// Spec §9: default request timeout 0 (none); a timeout still surfaces as ECONNABORTED if one is set per call.
const http = axios.create({ timeout: 0, headers: { 'content-type': 'application/json' } });

export function apiUrl(path: string): string {
  return getRuntimeConfig().apiUrl.replace(/\/+$/, '') + path;
}

/**
 * Calls whose bodies have no `token` field (spec §7): the server refuses unknown fields
 * (design §5), so a stored token sent along would lock a signed-in visitor on /register, or one
 * whose session check failed offline, out of signing in (issue 8 item 10).
 */
const WITHOUT_TOKEN: ReadonlySet<string> = new Set(['/api/v1/auth/login', '/api/v1/auth/register']);

/**
 * POST a spec §7 call. The stored token goes in the body (spec §3) unless the caller set one
 * or the call takes none. A 2xx answer whose body says `success: false` is still a failure.
 */
export async function call<E>(path: PathOf<E>, body: BodyOf<E>, opts: { timeout?: number } = {}): Promise<ResponseOf<E>> {
  const token = WITHOUT_TOKEN.has(path) ? null : getToken();
  const payload = { ...(token ? { token } : {}), ...(body as object) };
  try {
    const res = await http.post(apiUrl(path), payload, { timeout: opts.timeout ?? 0 });
    const data = res.data as { success?: unknown } | undefined;
    if (data && typeof data === 'object' && data.success === false) {
      throw new ApiError(serverText(data) ?? 'An internal error occurred.', {
        status: res.status,
        fromServer: serverText(data) !== undefined,
        success: false,
      });
    }
    return res.data as ResponseOf<E>;
  } catch (err) {
    throw toApiError(err);
  }
}

/** Multipart POST for uploads (design §7); progress is in bytes sent, not acknowledged. */
export async function postForm<R>(path: string, form: FormData, onProgress?: (sent: number) => void, signal?: AbortSignal): Promise<R> {
  try {
    const res = await http.post(apiUrl(path), form, {
      // axios drops this for FormData in browsers so the browser writes the boundary itself.
      headers: { 'content-type': 'multipart/form-data' },
      signal,
      onUploadProgress: onProgress ? (p) => onProgress(p.loaded) : undefined,
    });
    return res.data as R;
  } catch (err) {
    throw toApiError(err);
  }
}
