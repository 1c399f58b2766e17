import toast from 'react-hot-toast';
import { TOAST_DEFAULT_MS, TOAST_SHORT_MS } from './constants.ts';

/** Spec §9: short toasts last 1300 ms, the rest 5 s (the 5-toast cap lives in components/toasts.tsx). */
function duration(opts?: { short?: boolean }): number {
  return opts?.short ? TOAST_SHORT_MS : TOAST_DEFAULT_MS;
}

export function notifySuccess(msg: string, opts?: { short?: boolean }): void {
  toast.success(msg, { duration: duration(opts) });
}

export function notifyError(msg: string, opts?: { short?: boolean }): void {
  toast.error(msg, { duration: duration(opts) });
}

/**
 * Takes every toast down at once. At sign-out: the last account's "File deleted" or "Invite
 * created" stayed up to 5 s over the landing page, on a phone possibly handed to someone else.
 */
export function clearNotices(): void {
  toast.remove();
}
