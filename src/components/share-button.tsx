import { useCopied } from './use-copied.ts';
import { CopiedLabel } from './copy-link.tsx';

interface Props {
  url: string;
  /** What the share sheet names (the file name, "Invite to Stash"…). */
  title: string;
  text?: string;
  label?: string;
  className?: string;
  ariaLabel?: string;
}

/**
 * Issue 11 item 8: the system share sheet where the browser has the Web Share API (phones),
 * copying the link otherwise, with the same 'Copied to clipboard' confirmation as Copy link.
 */
export function ShareButton({ url, title, text, label = 'Share', className = 'btn btn-small', ariaLabel }: Props) {
  const { copied, copy } = useCopied();

  async function share() {
    const data: ShareData = { title, url, ...(text ? { text } : {}) };
    if (typeof navigator.share === 'function' && (navigator.canShare?.(data) ?? true)) {
      try {
        await navigator.share(data);
        return;
      } catch (err) {
        // The user closed the sheet: nothing to say. Any other refusal falls back to copying.
        if (err instanceof DOMException && err.name === 'AbortError') return;
      }
    }
    await copy(url);
  }

  return (
    <span className="copy-link share-link">
      <button type="button" className={className} onClick={() => void share()} aria-label={ariaLabel}>
        <CopiedLabel copied={copied}>{label}</CopiedLabel>
      </button>
      <span className="copy-status visually-hidden" role="status" aria-live="polite">
        {copied ? 'Copied to clipboard' : ''}
      </span>
    </span>
  );
}
