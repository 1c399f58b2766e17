import { useEffect, useState } from 'react';
import type { UploadItem, Uploader } from '../../upload/uploader.ts';

/** The queue as React state, fed by whichever Uploader is in place. */
export function useUploads(uploader: Uploader): UploadItem[] {
  const [items, setItems] = useState<UploadItem[]>([]);
  useEffect(() => uploader.subscribe(setItems), [uploader]);
  return items;
}

export function percentOf(item: UploadItem): number {
  if (item.state === 'done') return 100;
  if (item.size === 0) return 0;
  const bytes = item.ackedBytes + (item.sentBytes ?? 0);
  // Never show 100 before the server has acknowledged the last byte (spec §4: at 100 a link appears).
  return Math.min(99, Math.floor((bytes / item.size) * 100));
}
