/**
 * Messages between the metadata pool (main thread) and its worker (metadata-worker.ts).
 * Uploaded bytes are parsed only in the worker (issue 8 item 1, design §7); the worker asks
 * the main thread for any range beyond the head, so storage stays where its drivers live.
 */
/** The argument a previews reader is started with (metadata-pool.ts): it loads libvips rather than the sniffers. */
export const PREVIEWS_READER = '--previews';

export type MetadataTask =
  | { task: 'kind'; head: Uint8Array; size: number }
  | { task: 'video'; mime: string; head: Uint8Array; size: number }
  /** WebP previews of a listed image (render-previews.ts); the file is read through range reads. */
  | { task: 'previews'; size: number };

export interface KindResult {
  mime: string;
  ext: string;
  width: number | null;
  height: number | null;
}

export interface SizeResult {
  width: number | null;
  height: number | null;
}

export type ToWorker = ({ id: number } & MetadataTask) | { id: number; readReply: number; bytes: Uint8Array | null };

export interface PreviewResult {
  width: number;
  height: number;
  data: Uint8Array;
}

export type TaskResult = KindResult | SizeResult | PreviewResult[];

export type TaskMessage = { id: number; done: TaskResult | null } | { id: number; read: number; start: number; end: number };

/** `ready` is sent once the worker has loaded its parsers: deadlines start only after it. */
export type FromWorker = { ready: true } | TaskMessage;
