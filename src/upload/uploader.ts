/**
 * The one small interface between the upload UI and whatever sends the bytes (issue 4/5):
 * a main-thread uploader while the page is open, or the background worker queue that keeps
 * chunks in IndexedDB and survives reloads. The dashboard only ever talks to this.
 */
export type UploadState = 'waiting' | 'uploading' | 'paused' | 'offline' | 'failed' | 'done';

export interface UploadItem {
  /** The uploadId sent to the server (design §7), a UUID. */
  id: string;
  name: string;
  size: number;
  type: string;
  state: UploadState;
  /** Bytes the server has acknowledged (never bytes merely sent). */
  ackedBytes: number;
  /**
   * Optional: bytes of the chunk in flight already sent but not yet acknowledged, so the bar
   * moves within an 80 MB chunk. Never counted as done; an uploader may leave it out.
   */
  sentBytes?: number;
  /** Set when state is 'failed': the server's message or the spec's 'Error uploading file'. */
  error?: string;
  /** Set when state is 'done': the share link on the files host. */
  url?: string;
  /** False when the upload lives only in this page (quota short): it will not survive a reload. */
  persistent: boolean;
  createdAt: number;
}

export interface Uploader {
  enqueue(files: File[]): Promise<void>;
  list(): Promise<UploadItem[]>;
  /** Calls back with the whole queue on every change; returns the unsubscribe function. */
  subscribe(listener: (items: UploadItem[]) => void): () => void;
  pause(id: string): Promise<void>;
  resume(id: string): Promise<void>;
  cancel(id: string): Promise<void>;
  retry(id: string): Promise<void>;
  /** Drops finished and cancelled entries from the list. */
  clearFinished(): Promise<void>;
}
