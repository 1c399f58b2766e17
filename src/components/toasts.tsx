import { useEffect } from 'react';
import toast, { Toaster, useToasterStore } from 'react-hot-toast';
import { TOAST_DEFAULT_MS, TOAST_LIMIT } from '../lib/constants.ts';

/** Spec §9: at most 5 notifications at once; the oldest visible ones give way. */
export function Toasts() {
  const { toasts } = useToasterStore();
  useEffect(() => {
    toasts
      .filter((t) => t.visible)
      .slice(TOAST_LIMIT)
      .forEach((t) => toast.dismiss(t.id));
  }, [toasts]);
  return (
    <Toaster
      position="top-center"
      toastOptions={{ duration: TOAST_DEFAULT_MS, className: 'toast', ariaProps: { role: 'status', 'aria-live': 'polite' } }}
    />
  );
}
