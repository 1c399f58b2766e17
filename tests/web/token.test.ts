import { afterEach, describe, expect, it, vi } from 'vitest';
import { clearToken, getToken, setToken } from '../../src/lib/token.ts';

describe('the stored token (spec §3)', () => {
  afterEach(() => {
    Reflect.deleteProperty(navigator, 'serviceWorker');
  });

  it('signing out clears the token and asks the service worker to drop cached API answers', () => {
    const postMessage = vi.fn();
    Object.defineProperty(navigator, 'serviceWorker', { value: { controller: { postMessage } }, configurable: true });
    setToken('abc');
    expect(getToken()).toBe('abc');
    clearToken();
    expect(getToken()).toBeNull();
    expect(postMessage).toHaveBeenCalledWith('stash-clear-api-cache');
  });

  it('signs out cleanly where no service worker controls the page', () => {
    setToken('abc');
    expect(() => clearToken()).not.toThrow();
    expect(getToken()).toBeNull();
  });
});
