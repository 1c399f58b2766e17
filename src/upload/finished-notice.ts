import type { UploadItem } from './uploader.ts';

/**
 * Issue 5: "a notification when a background upload finishes". Shared by the page (the queue
 * runs in its worker) and the service worker (Background Sync ran the queue with no page open),
 * so both announce a finished upload the same way, once.
 */

/** Uploads seen unfinished before and done now: each is announced once, never one already done at load. */
export function newlyFinished(before: ReadonlyMap<string, Pick<UploadItem, 'state'>>, items: UploadItem[]): UploadItem[] {
  return items.filter((item) => {
    const was = before.get(item.id);
    return was !== undefined && was.state !== 'done' && item.state === 'done';
  });
}

/** The notification for a finished upload; its tag is the upload, so a repeat replaces it. */
export function finishedNotice(item: UploadItem): { title: string; options: NotificationOptions } {
  const body = item.url ? `${item.name} is uploaded: ${item.url}` : `${item.name} is uploaded.`;
  return { title: 'Upload finished', options: { body, tag: item.id, data: { url: item.url } } };
}
