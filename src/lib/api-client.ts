import axios from 'axios';
import type { BodyOf, PathOf, ResponseOf } from '../../contract/common.ts';
import { ApiError, serverText, toApiError } from './api-errors.ts';
import { getRuntimeConfig } from './runtime-config.ts';
import { getToken } from './token.ts';

export { ApiError, errorMessage, serverText, toApiError } from './api-errors.ts';

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
