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
          {children ?? 'Copy link'}
        </button>
      ) : (
        <a href={url} className={className} onClick={copy} title="Click to copy the link">
          {children ?? url}
        </a>
      )}
      <span className="copy-status" role="status" aria-live="polite">
        {copied ? 'Copied to clipboard' : ''}
      </span>
    </span>
  );
}
