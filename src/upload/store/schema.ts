import type { DBSchema } from 'idb';
import type { UploadState } from '../uploader.ts';

/**
 * One queued upload as the worker and the service worker keep it in IndexedDB (issue 5).
 * The file's bytes live in `chunks`, one record per protocol chunk (design §7), each deleted
 * once the server has acknowledged it.
 */
export interface UploadRecord {
  /** The uploadId sent to the server (design §7). */
  id: string;
  name: string;
  size: number;
  type: string;
  createdAt: number;
  chunkSize: number;
  totalChunks: number;
  /** How many chunks, from 0, are safely in IndexedDB (or were, before their acknowledgement). */
  chunksWritten: number;
  /** The copy into IndexedDB finished; until then a writer holds the `write:<id>` lock. */
  writeComplete: boolean;
  state: UploadState;
  ackedBytes: number;
  error?: string;
  url?: string;
  /** What the row says beside its state (UploadItem.notice). */
  notice?: string;
  /**
   * Who queued it (issue 11 item 1): the user id from auth/data, or `token:<sha256>` while it
   * is not known yet. Only that user sees it, and it is sent only with that user's token.
   * Records from before owners existed have none and belong to nobody.
   */
  owner?: string;
  /** What identifies the same file picked again (issue 11 item 2). */
  lastModified?: number;
  /** SHA-256 of the first HEAD_BYTES of the file. */
  headHash?: string;
  /** While cancelled: the state to return to on undo, and when the cancel happened. */
  beforeCancel?: UploadState;
  cancelledAt?: number;
  /**
   * Storage failed mid-copy: the page that has the File is taking the upload over into memory
   * once the current sender has let go of it; senders leave it alone meanwhile.
   */
  detached?: boolean;
  /** Where it came from: a picker in a page, or the share target handled by the service worker. */
  source: 'page' | 'share';
}

export interface ChunkRecord {
  uploadId: string;
  index: number;
  /**
   * The whole chunk. A Blob (issue 9, a browser pipeline as fast as curl): IndexedDB copies a
   * file-backed Blob into its own storage without the bytes passing through the page's memory,
   * and reading it back gives a handle the request sends straight from disk. Records written
   * before that hold an ArrayBuffer.
   */
  data: Blob | ArrayBuffer;
  /** SHA-256 hex of the whole chunk (design §9, also when resuming at an offset). */
  hash: string;
}

/** What a page hands down so the worker and service worker can talk to the API on their own. */
export interface AuthRecord {
  apiUrl: string;
  token: string | null;
  /** The signed-in user's owner key (see UploadRecord.owner); null when signed out. */
  owner?: string | null;
  chunkSize: number;
}

/** token hash → user id, learned from auth/data, so an offline start still knows who is signed in. */
export interface OwnerRecord {
  userId: string;
}

export interface UploadDb extends DBSchema {
  uploads: { key: string; value: UploadRecord };
  chunks: { key: [string, number]; value: ChunkRecord; indexes: { byUpload: string } };
  meta: { key: string; value: AuthRecord | OwnerRecord };
}

export const UPLOAD_DB_NAME = 'stash-uploads';
export const UPLOAD_DB_VERSION = 1;
