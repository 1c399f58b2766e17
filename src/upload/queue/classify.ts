import type { HttpAnswer } from './transport.ts';

export type Outcome =
  | { kind: 'ok'; body: Record<string, unknown> }
  | { kind: 'retry'; reason: string; retryAfterMs?: number; checksum?: boolean }
  | { kind: 'fatal'; message: string };

/** Spec §8: the server's text arrives as error (string, or error.error / error.message) or message. */
export function serverMessage(body: unknown): string | null {
  if (!body || typeof body !== 'object') return null;
  const b = body as Record<string, unknown>;
  if (typeof b.error === 'string') return b.error;
  if (b.error && typeof b.error === 'object') {
    const inner = b.error as Record<string, unknown>;
    if (typeof inner.error === 'string') return inner.error;
    if (typeof inner.message === 'string') return inner.message;
  }
  if (typeof b.message === 'string') return b.message;
  return null;
}

/** Retry-After is seconds or an HTTP date (RFC 9110 §10.2.3). */
export function parseRetryAfter(value: string | null, now: number = Date.now()): number | undefined {
  if (value === null || value.trim() === '') return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds) && seconds >= 0) return seconds * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

// Issue 5: these 4xx mean "later", not "never".
const RETRYABLE_4XX = new Set([408, 409, 423, 429]);

/** Decides what an answer means for the upload: carry on, try again later, or stop with a reason. */
export function classifyAnswer(answer: HttpAnswer, now: number = Date.now()): Outcome {
  const { status, body } = answer;
  if (status >= 200 && status < 300) {
    if (body && typeof body === 'object' && (body as Record<string, unknown>).success !== false) {
      return { kind: 'ok', body: body as Record<string, unknown> };
    }
    return { kind: 'fatal', message: serverMessage(body) ?? 'Error uploading file' };
  }
  const message = serverMessage(body);
  // Design §7: a checksum mismatch is discarded by the server and worth sending again.
  if (status === 422 && body && typeof body === 'object' && (body as Record<string, unknown>).retry === true) {
    return { kind: 'retry', reason: message ?? 'Chunk checksum mismatch', checksum: true };
  }
  if (RETRYABLE_4XX.has(status)) {
    const retryAfterMs = status === 429 ? parseRetryAfter(answer.retryAfter, now) : undefined;
    return { kind: 'retry', reason: message ?? `HTTP ${status}`, ...(retryAfterMs !== undefined ? { retryAfterMs } : {}) };
  }
  if (status >= 400 && status < 500) return { kind: 'fatal', message: message ?? 'Error uploading file' };
  // 5xx (a restarting server, maintenance, uploads switched off) and anything odd: try again later.
  return { kind: 'retry', reason: message ?? `HTTP ${status}`, ...(status === 503 ? { retryAfterMs: parseRetryAfter(answer.retryAfter, now) } : {}) };
}
