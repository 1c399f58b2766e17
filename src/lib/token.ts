/** Spec §3: the session token lives in localStorage under the key `token`. */
const KEY = 'token';

export function getToken(): string | null {
  try {
    return localStorage.getItem(KEY);
  } catch {
    return null; // storage blocked (private mode, policies): behave as signed out
  }
}

export function setToken(token: string): void {
  localStorage.setItem(KEY, token);
}

/**
 * Signing out also drops the service worker's cached API answers (src/sw/api-cache.ts), so the
 * last user's file lists do not stay on a shared phone.
 */
export function clearToken(): void {
  try {
    localStorage.removeItem(KEY);
  } catch {
    // nothing stored, nothing to clear
  }
  navigator.serviceWorker?.controller?.postMessage('stash-clear-api-cache');
}
