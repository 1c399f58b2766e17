import { useEffect, useRef, useState } from 'react';
import { copyText } from '../lib/clipboard.ts';
import { COPY_CONFIRM_MS } from '../lib/constants.ts';
import { notifyError } from '../lib/notify.ts';

/**
 * Copies text and keeps `copied` true for spec §9's 1 second, for the 'Copied to clipboard'
 * line; a refused copy says how to do it by hand.
 */
export function useCopied(): { copied: boolean; copy: (text: string) => Promise<void> } {
  const [copied, setCopied] = useState(false);
  const timer = useRef<ReturnType<typeof setTimeout>>(undefined);
  useEffect(() => () => clearTimeout(timer.current), []);
  async function copy(text: string) {
    try {
      await copyText(text);
      setCopied(true);
      clearTimeout(timer.current);
      timer.current = setTimeout(() => setCopied(false), COPY_CONFIRM_MS);
    } catch {
      notifyError('Could not copy the link. Select it and copy it by hand.');
    }
  }
  return { copied, copy };
}
