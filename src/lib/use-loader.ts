import { useCallback, useEffect, useState } from 'react';
import { useRetryUnreachable } from './use-retry-unreachable.ts';

export interface Loaded<T> {
  data: T | null;
  /** The failure of the last load, kept for the caller to show; null while fine. */
  error: unknown;
  loading: boolean;
  reload: () => void;
}

/**
 * Runs `load` whenever it changes (the caller builds it with useCallback from its filters and
 * page) and on reload(). An answer that arrives after a newer request started is dropped, so
 * typing quickly in a filter never shows the results of an older query. A load that got no
 * answer (offline, the server unreachable) is tried again by itself (useRetryUnreachable), so a
 * screen opened on a flaky phone connection fills in once the connection is back.
 */
export function useLoader<T>(load: () => Promise<T>): Loaded<T> {
  const [data, setData] = useState<T | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [loading, setLoading] = useState(true);
  const [tick, setTick] = useState(0);
  const retry = useRetryUnreachable(() => setTick((t) => t + 1));

  useEffect(() => {
    let current = true;
    setLoading(true);
    load().then(
      (value) => {
        if (!current) return;
        setData(value);
        setError(null);
        setLoading(false);
        retry.settled();
      },
      (err: unknown) => {
        if (!current) return;
        setError(err);
        setLoading(false);
        retry.after(err);
      },
    );
    return () => {
      current = false;
    };
  }, [load, tick, retry]);

  const reload = useCallback(() => setTick((t) => t + 1), []);
  return { data, error, loading, reload };
}
