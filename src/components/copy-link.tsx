import type { ReactNode } from 'react';
import { useCopied } from './use-copied.ts';

interface Props {
  url: string;
  /** What the control shows; the link itself by default. */
  children?: ReactNode;
  className?: string;
  /** Render as a button instead of a link (e.g. "Copy link" in a list of actions). */
  asButton?: boolean;
}

/** Spec §4: clicking the link copies it and 'Copied to clipboard' shows for 1 second. */
export function CopyLink({ url, children, className, asButton }: Props) {
  const { copied, copy: copyUrl } = useCopied();

  function copy(e: React.MouseEvent) {
    e.preventDefault(); // the link copies; opening is a separate control
    void copyUrl(url);
  }

  return (
    <span className="copy-link">
      {asButton ? (
        <button type="button" className={className ?? 'btn btn-small'} onClick={copy}>
          <CopiedLabel copied={copied}>{children ?? 'Copy link'}</CopiedLabel>
        </button>
      ) : (
        <a href={url} className={className} onClick={copy} title="Click to copy the link">
          {children ?? url}
        </a>
      )}
      <span className={asButton ? 'copy-status visually-hidden' : 'copy-status'} role="status" aria-live="polite">
        {copied ? 'Copied to clipboard' : ''}
      </span>
    </span>
  );
}

/**
 * A button's words, or "Copied" for the second after it copied, in a box as wide as the wider of
 * the two: in a row of actions a confirmation line under the button threw the buttons after it
 * onto a new line and back, or covered them (a file card's Open and Delete). A screen reader
 * hears "Copied to clipboard" from the status beside it.
 */
export function CopiedLabel({ copied, children }: { copied: boolean; children: ReactNode }) {
  return (
    <span className="copied-label">
      <span aria-hidden={copied || undefined}>{children}</span>
      <span aria-hidden={!copied || undefined}>Copied</span>
    </span>
  );
}
