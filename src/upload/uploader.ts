/**
 * The one small interface between the upload UI and whatever sends the bytes (issue 4/5/11):
 * a main-thread uploader while the page is open, or the background worker queue that keeps
 * chunks in IndexedDB and survives reloads. The dashboard only ever talks to this.
 *
 * States: waiting (queued, not sending yet), uploading, paused, offline (waiting for the
 * network), failed, done, interrupted (the local copy was cut off by a reload: the user must
 * choose the file again, issue 11 item 2), cancelled (removed in a few seconds unless undone,
 * item 4). 'preparing' is only ever shown, never stored: the copy into browser storage is
 * still running.
 */
export type UploadState = 'waiting' | 'uploading' | 'paused' | 'offline' | 'failed' | 'done' | 'interrupted' | 'cancelled';
export type ShownState = UploadState | 'preparing';

export interface UploadItem {
  /** The uploadId sent to the server (design §7), a UUID. */
  id: string;
  name: string;
  size: number;
  type: string;
  state: ShownState;
  /** Bytes the server has acknowledged (never bytes merely sent). */
  ackedBytes: number;
  /**
   * Optional: bytes of the chunk in flight already sent but not yet acknowledged, so the bar
   * moves within an 80 MB chunk. Never counted as done; an uploader may leave it out.
   */
  sentBytes?: number;
  /** While state is 'preparing': bytes already copied into browser storage. */
  savedBytes?: number;
  /** Set when state is 'failed': the server's message or the spec's 'Error uploading file'. */
  error?: string;
  /** Set when state is 'done': the share link on the files host. */
  url?: string;
  /**
   * Why an upload is not moving while it is retried (the server's words: uploads switched off,
   * maintenance, out of disk, too many unfinished uploads), cleared once a chunk is accepted;
   * or, on a done upload, that a cancel came too late and the file could not be deleted.
   */
  notice?: string;
  /**
   * The server refused the session this upload was sent with (401: signed out elsewhere, the
   * password changed, expired): it waits, every byte sent kept, until its owner signs in again.
   */
  signInAgain?: boolean;
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
  /** Stops at once and shows 'cancelled' for a few seconds, during which undoCancel brings it back. */
  cancel(id: string): Promise<void>;
  undoCancel(id: string): Promise<void>;
  retry(id: string): Promise<void>;
  /**
   * An interrupted copy gets its file again (issue 11 item 2). Rejects with a message a user
   * can read when the file is not the same one (name, size, last modified, first bytes).
   */
  chooseAgain(id: string, file: File): Promise<void>;
  /** Drops finished and cancelled entries from the list. */
  clearFinished(): Promise<void>;
  /**
   * The signed-in user signs out (issue 11 item 1): their unfinished uploads are kept for their
   * next sign-in on this device (keep) or dropped, and nothing is sent until someone signs in.
   */
  signOut(keep: boolean): Promise<void>;
  /**
   * The session check named the user behind `token` (auth/data's user id): uploads queued with
   * that token are theirs even if the uploader's own lookup never got an answer (issue 11 item 1).
   */
  signedInAs(token: string, userId: string): Promise<void>;
}

/** Not finished and not given up: what sign-out asks about. */
export function isPending(item: UploadItem): boolean {
  return item.state !== 'done' && item.state !== 'failed' && item.state !== 'cancelled';
}
