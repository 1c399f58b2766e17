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
