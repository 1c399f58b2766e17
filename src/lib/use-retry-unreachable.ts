import { useCallback, useEffect, useMemo, useRef } from 'react';

const FIRST_PAUSE_MS = 1_000;
const LONGEST_PAUSE_MS = 30_000;

/**
 * Tries a read again after it failed without reaching the server: at once on the `online`
 * event, and after growing pauses (1 s, 2 s … 30 s) while the browser says it is online.
 * The `online` event alone is not enough: the first request after it can still fail while the
 * network comes up, or while the service worker still sees it down, and a page that waited
 * for that one request would say "offline" or show an error until reloaded.
 *
 * `schedule()` after such a failure, `settled()` after an answer; leaving the page stops it.
 */
export function useRetryUnreachable(retry: () => void): { schedule: () => void; settled: () => void } {
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

  const schedule = useCallback(() => {
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
      p.timer = window.setTimeout(fire, Math.min(LONGEST_PAUSE_MS, FIRST_PAUSE_MS * 2 ** p.attempt));
      p.attempt += 1;
    }
  }, [cancel]);

  const settled = useCallback(() => {
    cancel();
    pending.current.attempt = 0;
  }, [cancel]);

  useEffect(() => cancel, [cancel]);
  return useMemo(() => ({ schedule, settled }), [schedule, settled]);
}
