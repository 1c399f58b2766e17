import { useEffect, useRef } from 'react';
import { useLocation } from 'react-router-dom';
import { useRuntimeConfig } from '../lib/runtime-config.ts';
import { pageTitle } from './page-titles.ts';

/** How long to wait for a screen's heading (a lazy screen or the session check may still be running). */
const HEADING_WAIT_MS = 3000;

/**
 * Issue 11 item 10, what a multi-page site does for free: the tab names the screen, a new screen
 * starts at the top, and a screen reader lands on the new heading instead of the link just used.
 * The first load keeps the browser's own focus (nothing was clicked yet).
 */
export function usePageChrome(): void {
  const { pathname } = useLocation();
  const { siteName } = useRuntimeConfig();
  const first = useRef(true);

  useEffect(() => {
    document.title = pageTitle(pathname, siteName);
    if (first.current) {
      first.current = false;
      return;
    }
    window.scrollTo(0, 0);
    return focusHeadingWhenShown();
  }, [pathname, siteName]);
}

/** Focuses the main heading as soon as it is in the page; returns a cancel function. */
export function focusHeadingWhenShown(): () => void {
  const started = Date.now();
  let frame = 0;
  const tryFocus = () => {
    const h1 = document.querySelector<HTMLElement>('main h1');
    if (h1) {
      if (!h1.hasAttribute('tabindex')) h1.setAttribute('tabindex', '-1');
      h1.focus({ preventScroll: true });
      return;
    }
    if (Date.now() - started < HEADING_WAIT_MS) frame = requestAnimationFrame(tryFocus);
  };
  frame = requestAnimationFrame(tryFocus);
  return () => cancelAnimationFrame(frame);
}
