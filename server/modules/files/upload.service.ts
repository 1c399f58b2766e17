import crypto from 'node:crypto';
import type { Readable } from 'node:stream';
import type { UploadChunkResponse, UploadDoneResponse, UploadStatus } from '../../../contract/files.ts';
import type { Deps } from '../../deps.ts';
import { HttpError, MESSAGES, badRequest, conflict, notFound, tooLarge, unavailable, unprocessable } from '../../http/errors.ts';
import { newSecret, nowSeconds, sha256Hex } from '../../lib/ids.ts';
import type { Caller } from '../auth/caller.repository.ts';
import { finishUpload, tooLargeMessage } from './finish-upload.ts';
import { streamIntoStorage } from './stream-into-storage.ts';
import type { UploadFields } from './upload-fields.ts';
import { claimUpload, createUpload, findUpload, listChunks, saveChunk, touchUpload, type UploadRow } from './uploads.repository.ts';

/** Design §7: an unfinished upload expires 24 h after its last activity. */
export const UPLOAD_TTL_SECONDS = 24 * 60 * 60;

/** Design §7: `allow_uploading` off closes every kind of upload, with a 503. */
export async function assertUploadsOpen(deps: Deps): Promise<void> {
  if (!(await deps.settings.get()).allow_uploading) throw unavailable(MESSAGES.uploadsOff);
}

/**
 * The row id of an upload. Scoped to the user, so one user can never reach another's upload
 * by guessing its uploadId; without an uploadId the spec's fields name it (design §7).
 */
export function uploadRowId(userId: string, uploadId: string | null, originalName: string, totalChunks: number): string {
  return uploadId ? sha256Hex(`id\n${userId}\n${uploadId.toLowerCase()}`) : sha256Hex(`name\n${userId}\n${originalName}\n${totalChunks}`);
}

export class UploadInterruptedError extends HttpError {
  constructor(stored: number) {
    super(400, `The upload was interrupted after ${stored} bytes of this chunk; resume from there.`);
  }
}

type Chunked = NonNullable<UploadFields['chunk']>;

/**
 * One chunk of a resumable upload, streamed straight to its place in the unfinished object
 * (byte chunkIndex × chunk size + chunkOffset) and hashed on the way (design §7, §9).
 */
export async function receiveChunk(
  deps: Deps,
  caller: Caller,
  fields: UploadFields & { chunk: Chunked },
  originalName: string,
  source: Readable,
): Promise<UploadChunkResponse | UploadDoneResponse> {
  const { totalChunks, chunkIndex, chunkOffset, uploadId } = fields.chunk;
  const chunkSize = deps.uploadChunkSize;
  const maxBytes = await deps.settings.maxFileSizeBytes();
  if (fields.fileSize !== null) {
    if (fields.fileSize > maxBytes) throw tooLarge(await tooLargeMessage(deps));
    const needed = Math.max(1, Math.ceil(fields.fileSize / chunkSize));
    if (needed !== totalChunks) {
      throw badRequest(`A file of ${fields.fileSize} bytes takes ${needed} chunks of ${chunkSize} bytes, not ${totalChunks}.`);
    }
  }
  const base = chunkIndex * chunkSize;
  if (base >= maxBytes && chunkIndex > 0) throw tooLarge(await tooLargeMessage(deps));
  if (chunkOffset >= chunkSize) throw badRequest(`Field 'chunkOffset' must be less than the chunk size (${chunkSize}).`);

  const upload = await openUpload(deps, caller, uploadRowId(caller.id, uploadId, originalName, totalChunks), originalName, totalChunks, fields.fileSize);
  const fileSize = upload.file_size ?? fields.fileSize;
  const isLast = chunkIndex === totalChunks - 1;
  // Spec §9: every chunk but the last is exactly the chunk size; the last is the rest.
  const expected = !isLast ? chunkSize : fileSize !== null ? fileSize - base : null;
  if (expected !== null && (expected < 0 || expected > chunkSize)) throw badRequest('The file size does not match the number of chunks.');

  const chunks = await listChunks(deps.db, upload.id);
  const existing = chunks.find((c) => c.chunkIndex === chunkIndex);
  if (existing?.complete) {
    // A chunk sent again is harmless (design §9: 200): its bytes are read and dropped.
    source.resume();
    await touchUpload(deps.db, upload.id, nowSeconds(), nowSeconds() + UPLOAD_TTL_SECONDS);
    return progress(chunks, totalChunks);
  }
  const kept = existing?.bytes ?? 0;
  if (chunkOffset > kept) throw conflict(`Only ${kept} bytes of chunk ${chunkIndex} are stored: resume from chunkOffset ${kept}.`);

  const limit = expected ?? chunkSize;
  const outcome = await streamIntoStorage(deps.storage, upload.storage_key, base + chunkOffset, source, {
    seed: chunkOffset > 0 ? deps.storage.readUnfinished(upload.storage_key, base, base + chunkOffset) : undefined,
    limit: (seen) => {
      const inChunk = chunkOffset + seen;
      if (base + inChunk > maxBytes) return tooLarge(`The file is larger than the maximum of ${maxBytes / 1_048_576} MB.`);
      if (inChunk > limit) return wrongSize(chunkIndex, isLast, limit);
      return null;
    },
  });
  const now = nowSeconds();
  if (outcome.error) {
    if (outcome.error instanceof HttpError) {
      await saveChunk(deps.db, upload.id, chunkIndex, 0, false, null);
      throw outcome.error;
    }
    // Cut off midway: keep what arrived so status reports it and the client sends only the rest.
    const stored = chunkOffset + outcome.written;
    await saveChunk(deps.db, upload.id, chunkIndex, stored, false, null);
    await touchUpload(deps.db, upload.id, now, now + UPLOAD_TTL_SECONDS);
    throw new UploadInterruptedError(stored);
  }
  const total = chunkOffset + outcome.written;
  if ((expected !== null && total !== expected) || (expected === null && total === 0 && totalChunks > 1)) {
    await saveChunk(deps.db, upload.id, chunkIndex, 0, false, null);
    throw wrongSize(chunkIndex, isLast, expected ?? chunkSize);
  }
  if (fields.chunkHash !== null && fields.chunkHash !== outcome.sha256) {
    // Design §7: a mismatch discards the chunk; the client sends it again.
    await saveChunk(deps.db, upload.id, chunkIndex, 0, false, null);
    throw unprocessable('Chunk checksum mismatch', { retry: true });
  }
  await saveChunk(deps.db, upload.id, chunkIndex, total, true, outcome.sha256);
  await touchUpload(deps.db, upload.id, now, now + UPLOAD_TTL_SECONDS);

  const after = await listChunks(deps.db, upload.id);
  const done = after.filter((c) => c.complete);
  if (done.length < totalChunks) return progress(after, totalChunks);
  if (!(await claimUpload(deps.db, upload.id))) return progress(after, totalChunks);
  const size = done.reduce((sum, c) => sum + c.bytes, 0);
  return finishUpload(deps, caller, upload, size);
}

/**
 * A whole file in one request (ShareX, curl, URL uploads; design §7). It is tracked as an
 * upload while it streams, so a crash midway leaves bytes the sweep reclaims.
 */
export async function receiveWhole(deps: Deps, caller: Caller, originalName: string, source: Readable): Promise<UploadDoneResponse> {
  const staged = await stageWhole(deps, caller, originalName, source);
  return finishStaged(deps, caller, staged);
}

export interface Staged {
  upload: UploadRow;
  size: number;
}

/** Streams a whole body into a fresh unfinished object, bounded by max_file_size. */
export async function stageWhole(deps: Deps, caller: Caller, originalName: string, source: Readable): Promise<Staged> {
  const maxBytes = await deps.settings.maxFileSizeBytes();
  const message = await tooLargeMessage(deps);
  const upload = await openUpload(deps, caller, sha256Hex(`whole\n${crypto.randomUUID()}`), originalName, 1, null);
  const outcome = await streamIntoStorage(deps.storage, upload.storage_key, 0, source, {
    limit: (seen) => (seen > maxBytes ? tooLarge(message) : null),
  });
  if (outcome.error) {
    await dropStaged(deps, { upload, size: 0 });
    throw outcome.error instanceof HttpError ? outcome.error : badRequest('The upload was interrupted before the whole file arrived.');
  }
  return { upload, size: outcome.written };
}

/** Lists a staged body as a file, under `originalName` when the request named it late. */
export async function finishStaged(deps: Deps, caller: Caller, staged: Staged, originalName?: string): Promise<UploadDoneResponse> {
  await claimUpload(deps.db, staged.upload.id);
  const upload = originalName ? { ...staged.upload, original_name: originalName } : staged.upload;
  return finishUpload(deps, caller, upload, staged.size);
}

export async function dropStaged(deps: Deps, staged: Staged): Promise<void> {
  await claimUpload(deps.db, staged.upload.id);
  await deps.storage.discard(staged.upload.storage_key);
}

async function openUpload(deps: Deps, caller: Caller, id: string, originalName: string, totalChunks: number, fileSize: number | null): Promise<UploadRow> {
  const now = nowSeconds();
  let upload = await findUpload(deps.db, id);
  if (upload && upload.expires_at <= now) {
    // Expired but not yet swept: start over rather than resume bytes the sweep may take any moment.
    if (await claimUpload(deps.db, id)) await deps.storage.discard(upload.storage_key);
    upload = undefined;
  }
  if (!upload) {
    upload = await createUpload(deps.db, {
      id,
      user_id: caller.id,
      original_name: originalName,
      total_chunks: totalChunks,
      file_size: fileSize,
      // Storage keys are server-made, never derived from client input (design §7).
      storage_key: newSecret(18),
      created_at: now,
      updated_at: now,
      expires_at: now + UPLOAD_TTL_SECONDS,
    });
  }
  if (upload.total_chunks !== totalChunks) {
    throw conflict(`This upload was started with ${upload.total_chunks} chunks; totalChunks cannot change.`);
  }
  if (fileSize !== null && upload.file_size !== null && Number(upload.file_size) !== fileSize) {
    throw conflict(`This upload was started with a fileSize of ${upload.file_size} bytes; it cannot change.`);
  }
  return { ...upload, file_size: upload.file_size === null ? null : Number(upload.file_size) };
}

function wrongSize(chunkIndex: number, isLast: boolean, expected: number): HttpError {
  return isLast
    ? badRequest(`The last chunk (${chunkIndex}) must be ${expected} bytes.`)
    : badRequest(`Chunk ${chunkIndex} must be exactly ${expected} bytes: every chunk but the last has the full chunk size.`);
}

function progress(chunks: { chunkIndex: number; complete: boolean }[], totalChunks: number): UploadChunkResponse {
  return { success: true, received: chunks.filter((c) => c.complete).map((c) => c.chunkIndex), totalChunks };
}

async function ownUpload(deps: Deps, caller: Caller, uploadId: string): Promise<UploadRow> {
  const upload = await findUpload(deps.db, uploadRowId(caller.id, uploadId, '', 0));
  if (!upload || upload.expires_at <= nowSeconds()) throw notFound('No unfinished upload with this uploadId.');
  return upload;
}

/** Design §7 `files/upload/status`: what is stored, so a client resends only the rest. */
export async function uploadStatus(deps: Deps, caller: Caller, uploadId: string): Promise<UploadStatus> {
  const upload = await ownUpload(deps, caller, uploadId);
  const chunks = await listChunks(deps.db, upload.id);
  const partial = chunks.find((c) => !c.complete && c.bytes > 0);
  return {
    success: true,
    totalChunks: upload.total_chunks,
    received: chunks.filter((c) => c.complete).map((c) => c.chunkIndex),
    partial: partial ? { chunkIndex: partial.chunkIndex, bytes: partial.bytes } : null,
  };
}

export async function cancelUpload(deps: Deps, caller: Caller, uploadId: string): Promise<void> {
  const upload = await ownUpload(deps, caller, uploadId);
  if (await claimUpload(deps.db, upload.id)) await deps.storage.discard(upload.storage_key);
}
