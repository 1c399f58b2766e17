import { useEffect } from 'react';
import toast, { Toaster, useToasterStore } from 'react-hot-toast';
import { TOAST_DEFAULT_MS, TOAST_LIMIT } from '../lib/constants.ts';
import { PHONE_SCREEN, useMediaQuery } from '../lib/use-media-query.ts';

/**
 * Spec §9: at most 5 notifications at once; the oldest visible ones give way. On a phone they
 * rise from the bottom, above the bottom nav and the home bar, where a thumb is: at the top they
 * covered the top bar's Logout and, with the page under the notch, sat in the status bar.
 * `--toasts-bottom` (styles/components.css) knows whether a bottom nav is on screen.
 *
 * The Toaster is in the page only while the store holds a toast (issue 9): mounted at once, its
 * styles (goober) were built inside the prerendered pages' hydration, one of the two long tasks
 * that keep Lighthouse's Total Blocking Time up. The store keeps a toast until its exit animation
 * is over, and one raised before the Toaster mounts, so nothing is missed.
 */
export function Toasts() {
  const { toasts } = useToasterStore();
  const phone = useMediaQuery(PHONE_SCREEN);
  useEffect(() => {
    toasts
      .filter((t) => t.visible)
      .slice(TOAST_LIMIT)
      .forEach((t) => toast.dismiss(t.id));
  }, [toasts]);
  if (toasts.length === 0) return null;
  return (
    <Toaster
      position={phone ? 'bottom-center' : 'top-center'}
      containerStyle={{ top: 'calc(16px + env(safe-area-inset-top))', bottom: 'var(--toasts-bottom)' }}
      toastOptions={{ duration: TOAST_DEFAULT_MS, className: 'toast', ariaProps: { role: 'status', 'aria-live': 'polite' } }}
    />
  );
}
