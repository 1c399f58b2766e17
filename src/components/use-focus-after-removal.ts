import { useCallback, useEffect, useRef, type RefObject } from 'react';

/**
 * A confirm dialog gives focus back to the button that opened it (components/modal.ts); when
 * that button's row or card is the one deleted, focus went with it to nowhere, and the next Tab
 * or swipe of a keyboard or screen-reader user started again from the top of the page. Call the
 * returned `arm()` once the removal succeeded: at the next change of `list` (the list read again
 * without the item), if focus was lost, it goes to `target` (the screen's heading).
 */
export function useFocusAfterRemoval(target: RefObject<HTMLElement | null>, list: unknown): () => void {
  const armed = useRef(false);
  useEffect(() => {
    if (!armed.current) return;
    armed.current = false;
    const active = document.activeElement;
    if (active && active !== document.body) return;
    const el = target.current;
    if (!el) return;
    if (!el.hasAttribute('tabindex')) el.setAttribute('tabindex', '-1');
    el.focus({ preventScroll: true });
  }, [list, target]);
  return useCallback(() => {
    armed.current = true;
  }, []);
}
