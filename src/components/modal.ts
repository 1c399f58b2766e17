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
 * What every modal does while it is open: focus moves to `first` inside it and returns to where
 * it was afterwards, and the page behind it does not scroll — a finger dragging on the backdrop
 * or a wheel over it moved the list underneath, so the row the sheet was about was gone on close.
 */
export function useModal(first: RefObject<HTMLElement | null> | (() => HTMLElement | null | undefined)): void {
  useEffect(() => {
    const before = document.activeElement as HTMLElement | null;
    const target = typeof first === 'function' ? first() : first.current;
    target?.focus();
    const unlock = lockPageScroll();
    return () => {
      unlock();
      // Only focus that went away with the modal comes back. An action that moved it on (a
      // sheet's Rename opens a form whose field takes focus as the sheet closes) keeps it there:
      // sent back to "Actions", a screen reader never heard of the field.
      const now = document.activeElement;
      if (!now || now === document.body || now === target || !now.isConnected) before?.focus?.();
    };
    // Runs once per opening: the element to focus is read when the modal mounts.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, []);
}
