import { useCallback, useSyncExternalStore } from 'react';

/**
 * Where a screen counts as a phone's: the bottom nav takes over from the sidebar there
 * (app/signed-in-layout.css), and the stylesheets' `@media (max-width: 760px)` rules say the same.
 */
export const PHONE_SCREEN = '(max-width: 760px)';

/** Whether `query` matches now, re-rendering when it starts or stops matching (a phone turned). */
export function useMediaQuery(query: string): boolean {
  const subscribe = useCallback(
    (onChange: () => void) => {
      if (typeof window.matchMedia !== 'function') return () => {};
      const list = window.matchMedia(query);
      list.addEventListener('change', onChange);
      return () => list.removeEventListener('change', onChange);
    },
    [query],
  );
  return useSyncExternalStore(subscribe, () => typeof window.matchMedia === 'function' && window.matchMedia(query).matches, () => false);
}
