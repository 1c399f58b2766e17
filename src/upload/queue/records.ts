import type { UploadRecord } from '../store/schema.ts';
import type { UploadItem } from '../uploader.ts';

/** Issue 11 item 4: how long a cancelled upload can be brought back. */
export const CANCEL_UNDO_MS = 5000;
/** A cancel that reached the server after the file was listed, and whose delete was refused. */
export const CANCELLED_TOO_LATE = 'Too late to cancel: the file was already uploaded and could not be deleted. Delete it from your files.';

/** Still to be sent by someone (not paused, finished, interrupted, cancelled or being handed over). */
export function isSendable(record: UploadRecord): boolean {
  return (record.state === 'waiting' || record.state === 'uploading' || record.state === 'offline') && !record.detached;
}

/** The copy into browser storage is still running (issue 11 item 2: the row says Preparing). */
function preparing(record: UploadRecord, persistent: boolean): boolean {
  return persistent && !record.writeComplete && isSendable(record);
}

export function toItem(record: UploadRecord, persistent: boolean): UploadItem {
  const isPreparing = preparing(record, persistent);
  return {
    id: record.id,
    name: record.name,
    size: record.size,
    type: record.type,
    state: isPreparing ? 'preparing' : record.state,
    ackedBytes: record.ackedBytes,
    ...(isPreparing ? { savedBytes: Math.min(record.size, record.chunksWritten * record.chunkSize) } : {}),
    ...(record.error !== undefined ? { error: record.error } : {}),
    ...(record.url !== undefined ? { url: record.url } : {}),
    ...(record.notice !== undefined ? { notice: record.notice } : {}),
    persistent,
    createdAt: record.createdAt,
  };
}
