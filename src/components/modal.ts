import { useEffect, type RefObject } from 'react';

/**
 * Keyboard handling shared by the modal dialogs: Escape closes, Tab and Shift+Tab cycle among
 * the enabled buttons inside `box` so focus never leaves the dialog.
 */
export function dialogKeyDown(e: React.KeyboardEvent, box: HTMLElement | null, onEscape: () => void): void {
  if (e.key === 'Escape') {
    e.preventDefault();
    onEscape();
    return;
  }
  if (e.key !== 'Tab' || !box) return;
  const buttons = box.querySelectorAll<HTMLButtonElement>('button:not(:disabled)');
  const first = buttons[0];
  const last = buttons[buttons.length - 1];
  if (e.shiftKey && document.activeElement === first) {
    e.preventDefault();
    last?.focus();
  } else if (!e.shiftKey && document.activeElement === last) {
    e.preventDefault();
    first?.focus();
  }
}

// A sheet's action can open a confirm dialog over it: the page stays still until the last closes.
let openModals = 0;

function lockPageScroll(): () => void {
  const html = document.documentElement;
  if (openModals++ === 0) {
    // The desktop scrollbar goes away with the scrolling; its width is kept so nothing shifts.
    html.style.setProperty('--scrollbar-gap', `${window.innerWidth - html.clientWidth}px`);
    html.dataset.modalOpen = '';
  }
  return () => {
    if (--openModals > 0) return;
    delete html.dataset.modalOpen;
    html.style.removeProperty('--scrollbar-gap');
  };
}

/**
 * Focus moves to `first` when the caller mounts and returns to where it was (the button that
 * opened it) when it unmounts, so a keyboard or screen-reader user carries on from there instead
 * of from the top of the page. Every modal does this (useModal); so does an inline form that
 * opens in place of a dialog (admin Rename, Reset password).
 */
export function useFocusReturn(first: RefObject<HTMLElement | null> | (() => HTMLElement | null | undefined)): void {
  useEffect(() => {
    const before = document.activeElement as HTMLElement | null;
    const target = typeof first === 'function' ? first() : first.current;
    target?.focus();
    return () => {
      // Only focus that went away with the caller comes back. An action that moved it on (to a
      // field that took focus as a sheet closed) keeps it there: sent back to "Actions", a
      // screen reader never heard of the field.
      const now = document.activeElement;
      if (!now || now === document.body || now === target || !now.isConnected) before?.focus?.();
    };
    // Runs once per opening: the element to focus is read when the caller mounts.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, []);
}

/**
 * What every modal does while it is open: focus moves in and returns afterwards (useFocusReturn),
 * and the page behind it does not scroll — a finger dragging on the backdrop or a wheel over it
 * moved the list underneath, so the row the sheet was about was gone on close.
 */
export function useModal(first: RefObject<HTMLElement | null> | (() => HTMLElement | null | undefined)): void {
  // Before useFocusReturn: cleanups run in order, so the page can scroll again by the time focus
  // returns to an opener that may need scrolling into view.
  useEffect(() => lockPageScroll(), []);
  useFocusReturn(first);
}
