import { useCallback, useEffect, useMemo, useRef } from 'react';
import { backoffDelay, type BackoffOptions } from '../upload/queue/backoff.ts';
import { parseRetryAfter } from '../upload/queue/classify.ts';
import { errorMessage, isNoAnswer, isTemporary } from './api-errors.ts';

const PAUSES: BackoffOptions = { baseMs: 1_000, maxMs: 30_000 };
/** No jitter: one screen asking again, not a fleet of uploaders coming back at once. */
const NO_JITTER = () => 1;

const capitalized = (what: string) => what.charAt(0).toUpperCase() + what.slice(1);

/**
 * What a screen says while its data has no answer and is being tried again (`what`: "this list",
 * "this page"): offline, or online with the server not answering. Never "an error occurred":
 * nothing failed that the user could act on, and it comes by itself.
 */
export function noAnswerText(what: string, online = navigator.onLine): string {
  return online
    ? `The server cannot be reached right now. ${capitalized(what)} will load by itself as soon as it answers.`
    : `You are offline and ${what} has not been saved on this device yet. It will load by itself when you are back online.`;
}

/**
 * The banner for a failed read: no answer (see noAnswerText); a server that says "not now" (its
 * words, then that the screen comes by itself); or spec §8's 'Error: ...'.
 */
export function loadFailureText(err: unknown, what: string, fallback = 'An internal error occurred.'): string {
  if (isNoAnswer(err)) return noAnswerText(what);
  if (isTemporary(err)) return `${errorMessage(err, 'The server cannot answer right now.')} ${capitalized(what)} will load by itself as soon as the server can answer.`;
  return `Error: ${errorMessage(err, fallback)}`;
}

/**
 * Tries a read again after it failed without reaching the server, or with an answer that says
 * "not now" (isTemporary): at once on the `online` event, and after growing pauses (1 s, 2 s …
 * 30 s, not sooner than the answer's Retry-After up to 30 s) while the browser says it is online.
 * The `online` event alone is not enough: the first request after it can still fail while the
 * network comes up, or while the service worker still sees it down, and a page that waited
 * for that one request would say "offline" or show an error until reloaded.
 *
 * `after(err)` when a read failed (it schedules when no answer came or the answer said "not now"),
 * `settled()` after an answer; leaving the page stops it.
 */
export function useRetryUnreachable(retry: () => void): { after: (err: unknown) => void; settled: () => void } {
  const latest = useRef(retry);
  latest.current = retry;
  const pending = useRef<{ timer?: number; onOnline?: () => void; attempt: number }>({ attempt: 0 });

  const cancel = useCallback(() => {
    const p = pending.current;
    if (p.timer !== undefined) window.clearTimeout(p.timer);
    if (p.onOnline) window.removeEventListener('online', p.onOnline);
    p.timer = undefined;
    p.onOnline = undefined;
  }, []);

  const schedule = useCallback((notBeforeMs = 0) => {
    cancel();
    const p = pending.current;
    const fire = () => {
      cancel();
      latest.current();
    };
    p.onOnline = fire;
    window.addEventListener('online', fire);
    // Offline, only the `online` event can help; timers would spin for nothing.
    if (navigator.onLine) {
      p.timer = window.setTimeout(fire, Math.max(Math.min(notBeforeMs, PAUSES.maxMs), backoffDelay(p.attempt, PAUSES, NO_JITTER)));
      p.attempt += 1;
    }
  }, [cancel]);

  const settled = useCallback(() => {
    cancel();
    pending.current.attempt = 0;
  }, [cancel]);

  const after = useCallback(
    (err: unknown) => {
      if (isNoAnswer(err)) schedule();
      else if (isTemporary(err)) schedule(parseRetryAfter(err.retryAfter ?? null));
      else settled();
    },
    [schedule, settled],
  );

  useEffect(() => cancel, [cancel]);
  return useMemo(() => ({ after, settled }), [after, settled]);
}
