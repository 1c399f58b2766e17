import { DirectUploader } from './direct-uploader.ts';
import { createUploadQueueClient } from './queue-client.ts';
import type { Uploader } from '../uploader.ts';

let instance: Uploader | null = null;

/** The background queue needs a worker, IndexedDB and Web Locks (one sender across tabs). */
function canQueueInBackground(): boolean {
  return typeof Worker !== 'undefined' && typeof indexedDB !== 'undefined' && typeof navigator !== 'undefined' && 'locks' in navigator;
}

/**
 * The one uploader the dashboard talks to (issue 5): the worker queue that keeps chunks in
 * IndexedDB and survives reloads, or, where that cannot run, the main-thread DirectUploader,
 * whose items say `persistent: false` so the page tells the user a reload loses them.
 */
export function getUploader(): Uploader {
  instance ??= canQueueInBackground() ? createUploadQueueClient(() => new DirectUploader()) : new DirectUploader();
  return instance;
}

/** Tests and the PWA wiring set their own. */
export function setUploader(uploader: Uploader | null): void {
  instance = uploader;
}
