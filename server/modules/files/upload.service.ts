import crypto from 'node:crypto';
import { Readable } from 'node:stream';
import type { UploadChunkResponse, UploadDoneResponse, UploadStatus } from '../../../contract/files.ts';
import type { Deps } from '../../deps.ts';
import { HttpError, MESSAGES, badRequest, conflict, notFound, tooLarge, unavailable, unprocessable } from '../../http/errors.ts';
import { newSecret, nowSeconds, sha256Hex } from '../../lib/ids.ts';
import type { Caller } from '../auth/caller.repository.ts';
import { finishClaimed, tooLargeMessage } from './finish-upload.ts';
import { streamIntoStorage, type WriteOutcome } from './stream-into-storage.ts';
import { StorageError } from '../../storage/storage.ts';
import { sha256OfStream } from '../../lib/sha256-off-thread.ts';
import type { UploadFields } from './upload-fields.ts';
import { assertQuota, assertRoomFor, openBoundedUpload, openWholeUpload, wholeFileBounds } from './upload-bounds.ts';
import { MB } from '../settings/settings.service.ts';
import { ChunkLease, LeaseLostError, uploadGone } from './upload-lease.ts';
import {
  claimUpload,
  findFinished,
  findUpload,
  listChunks,
  rememberCancel,
  touchUpload,
  wasCancelled,
  wasCancelledOrFinished,
  type UploadRow,
} from './uploads.repository.ts';
import { toFileRecord } from './file-record.ts';

type Finished = NonNullable<Awaited<ReturnType<typeof findFinished>>>;

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
 * `hashAfter`: where the request's fields did not name a `chunkHash` before the bytes, the one
 * that follows them, if any (upload.routes.ts), asked once the bytes are stored and before the
 * chunk is recorded complete, so a hash sent last is checked as one sent first.
 */
export async function receiveChunk(
  deps: Deps,
  caller: Caller,
  fields: UploadFields & { chunk: Chunked },
  originalName: string,
  source: Readable,
  hashAfter?: () => Promise<string | null>,
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
  // Equal to the chunk size it resumes a chunk whose bytes all arrived but whose request was cut
  // before its end (status reports them all): an empty file part completes it, as for the last.
  if (chunkOffset > chunkSize) throw badRequest(`Field 'chunkOffset' must be at most the chunk size (${chunkSize}).`);

  const rowId = uploadRowId(caller.id, uploadId, originalName, totalChunks);
  // Only an upload named by the client is remembered once finished (finishIfWhole).
  const finishedAnswer = async () => {
    const finished = uploadId !== null ? await findFinished(deps.db, rowId, nowSeconds()) : undefined;
    return finished ? answerFinished(deps, caller, finished, source) : null;
  };
  try {
    return await receiveOpenChunk(deps, caller, fields, originalName, source, { rowId, maxBytes, hashAfter });
  } catch (err) {
    // Finished already, its last answer lost: the file it became, not a new upload (design §7).
    // Its row went with the finish, so openUpload found none and met the finish where it looks
    // for a cancel (410). Asked here rather than before every chunk: an upload's row and the
    // memory of its finish never exist together, and each chunk of an open upload saves a read.
    // So is an upload finished by another request while this one ran (the last chunk sent again
    // by a client that gave up waiting on the first).
    if (err instanceof HttpError && err.statusCode === 410) {
      const finished = await finishedAnswer();
      if (finished) return finished;
    }
    throw err;
  }
}

/** receiveChunk once it is known the upload is not finished: opened if new, the chunk stored. */
async function receiveOpenChunk(
  deps: Deps,
  caller: Caller,
  fields: UploadFields & { chunk: Chunked },
  originalName: string,
  source: Readable,
  known: { rowId: string; maxBytes: number; hashAfter?: (() => Promise<string | null>) | undefined },
): Promise<UploadChunkResponse | UploadDoneResponse> {
  const { rowId, maxBytes, hashAfter } = known;
  const { totalChunks, chunkIndex, chunkOffset, uploadId } = fields.chunk;
  const chunkSize = deps.uploadChunkSize;
  const base = chunkIndex * chunkSize;
  // The declared size against the storage quota: before a new upload's row is made, and before
  // an open upload's chunk is read; not before a finished one's answer (its file counts already).
  const declaredFits = async () => {
    if (fields.fileSize !== null) await assertQuota(deps, caller, fields.fileSize);
  };
  const upload = await openUpload(deps, caller, rowId, originalName, totalChunks, fields.fileSize, async () => {
    if (chunkOffset > 0) throw conflict(`Only 0 bytes of chunk ${chunkIndex} are stored: resume from chunkOffset 0.`);
    await declaredFits();
  });
  if (upload.foundOpen) await declaredFits();
  const named = uploadId !== null;
  const fileSize = upload.file_size ?? fields.fileSize;
  const isLast = chunkIndex === totalChunks - 1;
  // Spec §9: every chunk but the last is exactly the chunk size; the last is the rest.
  const expected = !isLast ? chunkSize : fileSize !== null ? fileSize - base : null;
  if (expected !== null && (expected < 0 || expected > chunkSize)) throw badRequest('The file size does not match the number of chunks.');

  const held = await ChunkLease.acquire(deps.db, upload.id, chunkIndex, deps.uploadLeaseMs);
  if (held.kind === 'complete') {
    // Sent again from an offset (the client saw only part of it kept): compared whole, as a hash is.
    const whole = chunkOffset > 0 ? joined(deps.storage.readUnfinished(upload.storage_key, base, base + chunkOffset), source) : source;
    try {
      return await resentChunk(deps, caller, upload, chunkIndex, held.row.sha256, whole, named);
    } catch (err) {
      throw await goneOr(deps, upload.id, err);
    }
  }
  const { lease } = held;
  /** This chunk's bytes once this request has recorded it complete. */
  let completedBytes = 0;
  // Taken over or cancelled: stop reading this body now, not at its next piece.
  lease.signal.addEventListener('abort', () => source.destroy(lease.signal.reason as Error), { once: true });
  try {
    // A writer that died holding the lease never recorded its bytes: the store knows them (design §7).
    const kept = held.takenOver
      ? await deps.storage.storedBytes(upload.storage_key, base, base + chunkSize)
      : held.row.bytes;
    if (chunkOffset > kept) throw conflict(`Only ${kept} bytes of chunk ${chunkIndex} are stored: resume from chunkOffset ${kept}.`);
    await assertRoomFor(deps, caller, expected ?? chunkSize);
    const limit = expected ?? chunkSize;
    const outcome = await streamIntoStorage(deps.storage, upload.storage_key, base + chunkOffset, source, {
      signal: lease.signal,
      seed: chunkOffset > 0 ? deps.storage.readUnfinished(upload.storage_key, base, base + chunkOffset) : undefined,
      limit: (seen) => {
        const inChunk = chunkOffset + seen;
        if (base + inChunk > maxBytes) return tooLarge(`The file is larger than the maximum of ${maxBytes / MB} MB.`);
        if (inChunk > limit) return wrongSize(chunkIndex, isLast, limit);
        return lease.check();
      },
    });
    const refuse = async (err: unknown): Promise<never> => {
      // Design §7: a refused chunk's bytes are forgotten; the client sends the whole chunk again.
      await deps.storage.resetRange(upload.storage_key, base, base + chunkSize);
      await lease.settle({ bytes: 0, complete: false, sha256: null });
      throw err;
    };
    if (outcome.error) {
      if (outcome.error instanceof LeaseLostError || lease.signal.aborted) throw (await lease.gone()) ? uploadGone() : new LeaseLostError(chunkIndex);
      if (outcome.error instanceof HttpError) return await refuse(outcome.error);
      // Cut off midway (or the disk filled): keep what arrived so status reports it and the client sends only the rest.
      const stored = chunkOffset + outcome.written;
      await lease.settle({ bytes: stored, complete: false, sha256: null });
      await touch(deps, upload);
      throw storageFailure(outcome) ?? new UploadInterruptedError(stored);
    }
    const total = chunkOffset + outcome.written;
    if ((expected !== null && total !== expected) || (expected === null && total === 0 && totalChunks > 1)) {
      return await refuse(wrongSize(chunkIndex, isLast, expected ?? chunkSize));
    }
    let claimed = fields.chunkHash;
    if (claimed === null && hashAfter) {
      try {
        claimed = await hashAfter();
      } catch (err) {
        // A malformed hash after the bytes: refused as it would have been before them.
        return await refuse(err);
      }
    }
    // Design §7: a mismatch discards the chunk; the client sends it again.
    if (claimed !== null && claimed !== outcome.sha256) return await refuse(unprocessable('Chunk checksum mismatch', { retry: true }));
    await lease.settle({ bytes: total, complete: true, sha256: outcome.sha256 });
    completedBytes = total;
  } catch (caught) {
    const err = await goneOr(deps, upload.id, caught);
    // Gone while this request wrote (cancelled, or swept or finished after its lease lapsed): what
    // it wrote after the canceller discarded the upload's bytes is nobody's, and no later upload
    // shares its random key, so it goes now rather than staying on disk for good.
    if (err instanceof HttpError && err.statusCode === 410) await deps.storage.discard(upload.storage_key).catch(() => {});
    throw err;
  } finally {
    await lease.release();
  }
  await touch(deps, upload);

  return finishIfWhole(deps, caller, upload, named, { chunkIndex, bytes: completedBytes });
}

/**
 * Once every chunk is stored, the one request that wins the finish claim lists the file.
 * `named`: the client gave an uploadId, so the finished upload is remembered under it.
 */
async function finishIfWhole(
  deps: Deps,
  caller: Caller,
  upload: UploadRow,
  named: boolean,
  recorded?: { chunkIndex: number; bytes: number },
): Promise<UploadChunkResponse | UploadDoneResponse> {
  // The one chunk of a one-chunk upload, just recorded whole by this request: nothing to read back.
  const after = upload.total_chunks === 1 && recorded ? [{ ...recorded, complete: true }] : await listChunks(deps.db, upload.id);
  const done = after.filter((c) => c.complete);
  if (done.length < upload.total_chunks) return progress(after, upload.total_chunks);
  const size = done.reduce((sum, c) => sum + c.bytes, 0);
  const rememberUntil = named ? nowSeconds() + UPLOAD_TTL_SECONDS : undefined;
  return (await finishClaimed(deps, caller, upload, size, rememberUntil)) ?? progress(after, upload.total_chunks);
}

/**
 * A request of an upload that is already a file. Its bytes are read to the end (the connection
 * stays usable) and dropped; the answer is the last chunk's. A file deleted since is 410: sent
 * again it would come back, which its owner did not ask for.
 */
async function answerFinished(deps: Deps, caller: Caller, finished: Finished, source: Readable): Promise<UploadDoneResponse> {
  try {
    for await (const _piece of source);
  } catch {
    // Already cut (a request that met the finish midway): nothing is left to read.
  }
  return doneAnswer(deps, caller, finished);
}

function doneAnswer(deps: Deps, caller: Caller, finished: Finished): UploadDoneResponse {
  if (!finished.file) throw new HttpError(410, 'This upload was finished, and its file has since been deleted.');
  const file = toFileRecord(finished.file, caller.username, deps.config.urls.files);
  return { success: true, url: file.url, file };
}

/**
 * How far short of a full UPLOAD_TTL_SECONDS an upload's expiry may be and not be moved: an
 * upload opened or touched within the last minute is not written again for a chunk received in
 * that minute (a one-chunk upload's row was written moments before; issue 9's small uploads).
 */
const TOUCH_SLACK_SECONDS = 60;

/** Design §7: activity on an upload moves its expiry to UPLOAD_TTL_SECONDS from now. */
async function touch(deps: Deps, upload: Pick<UploadRow, 'id' | 'expires_at'>): Promise<void> {
  const now = nowSeconds();
  if (Number(upload.expires_at) >= now + UPLOAD_TTL_SECONDS - TOUCH_SLACK_SECONDS) return;
  await touchUpload(deps.db, upload.id, now, now + UPLOAD_TTL_SECONDS);
}

/**
 * A chunk that is already whole, sent again. The same bytes are harmless (design §9: 200); other
 * bytes mean two files share this upload — spec-only clients without an uploadId uploading two
 * files of one name at once — and the later one is refused rather than mixed in (issue 8 item 2).
 */
async function resentChunk(
  deps: Deps,
  caller: Caller,
  upload: UploadRow,
  chunkIndex: number,
  sha256: string | null,
  source: Readable,
  named: boolean,
): Promise<UploadChunkResponse | UploadDoneResponse> {
  const hex = await sha256OfStream(source);
  if (sha256 !== null && hex !== sha256) {
    throw conflict(
      `Chunk ${chunkIndex} of this upload already holds different bytes: another file of the same name is being uploaded at the same time. Retry once it is done, or send an uploadId.`,
    );
  }
  await touch(deps, upload);
  // A finish cut short (the server died while listing the file) is taken up here.
  return finishIfWhole(deps, caller, upload, named);
}

/** `first`'s bytes, then `rest`'s. */
function joined(first: Readable, rest: Readable): Readable {
  return Readable.from(
    (async function* () {
      yield* first;
      yield* rest;
    })(),
    { objectMode: false },
  );
}

/** A store that is out of room answers 507 (issue 8: a full disk is a clear answer, not a 500). */
/**
 * What a body that stopped short answers, other than its own limits: a full disk 507; any other
 * failure of the store (EIO, a driver's error) 503 with `retry`, the bytes stored so far kept
 * and reported by status, since it is the server's fault and trying again can work; null when
 * the sender's body broke off (a cut connection), whose answer nobody is left to read.
 */
function storageFailure(outcome: WriteOutcome): HttpError | null {
  const code = (outcome.error as { code?: unknown } | null)?.code;
  if (code === 'ENOSPC' || code === 'EDQUOT') {
    return new HttpError(507, 'Insufficient storage: the server has no room for this chunk right now. The bytes received so far are kept; try again later.');
  }
  if (outcome.fromSource) return null;
  // Before, a disk error here answered 400 "interrupted", which a client takes as final.
  return Object.assign(new StorageError(503, STORE_WRITE_FAILED, String(outcome.error)), { cause: outcome.error });
}

const STORE_WRITE_FAILED = 'The file store failed while writing this upload. The bytes received so far are kept; please try again shortly.';

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
  /** SHA-256 hex of the staged bytes, for a `chunkHash` sent with a whole file. */
  sha256: string;
}

/** Streams a whole body into a fresh unfinished object, bounded by max_file_size. */
export async function stageWhole(deps: Deps, caller: Caller, originalName: string, source: Readable): Promise<Staged> {
  const maxBytes = await deps.settings.maxFileSizeBytes();
  const message = await tooLargeMessage(deps);
  const now = nowSeconds();
  // Design §6: the per-user bounds hold before any byte is written, and while the body streams.
  const { upload, reserved } = await openWholeUpload(deps, caller, {
    // Made up here and never told to the client: no other request can hold or name this upload.
    id: sha256Hex(`whole\n${crypto.randomUUID()}`),
    user_id: caller.id,
    original_name: originalName,
    total_chunks: 1,
    file_size: null,
    storage_key: newSecret(18),
    created_at: now,
    updated_at: now,
    expires_at: now + UPLOAD_TTL_SECONDS,
  });
  const bounds = wholeFileBounds(deps, caller, upload, reserved);
  // A bound that could not be read (the database failing mid-body) is the server's failure, not
  // an interrupted body: it reaches the error handler as it is (503 when the database is down).
  const uncheckable: unknown[] = [];
  const limit = (seen: number) => {
    if (seen > maxBytes) return tooLarge(message);
    const verdict = bounds(seen);
    if (!(verdict instanceof Promise)) return verdict;
    return verdict.catch((error: unknown) => {
      uncheckable.push(error);
      throw error;
    });
  };
  // Never resumed (a body cut short is dropped below): no progress record to keep.
  const outcome = await streamIntoStorage(deps.storage, upload.storage_key, 0, source, { limit, resumable: false });
  if (outcome.error) {
    await dropStaged(deps, { upload, size: 0, sha256: '' });
    if (outcome.error instanceof HttpError) throw outcome.error;
    if (uncheckable.length > 0) throw uncheckable[0];
    throw storageFailure(outcome) ?? badRequest('The upload was interrupted before the whole file arrived.');
  }
  return { upload, size: outcome.written, sha256: outcome.sha256 };
}

/**
 * Lists a staged body as a file, under `originalName` when the request named it late. A
 * `chunkHash` sent with a whole file is checked as a chunk's is (design §7): a mismatch is 422
 * `retry` and lists nothing (the caller drops what was staged).
 */
export async function finishStaged(deps: Deps, caller: Caller, staged: Staged, sent: { originalName?: string; chunkHash?: string | null } = {}): Promise<UploadDoneResponse> {
  if (sent.chunkHash && sent.chunkHash !== staged.sha256) throw unprocessable('Chunk checksum mismatch', { retry: true });
  const upload = sent.originalName ? { ...staged.upload, original_name: sent.originalName } : staged.upload;
  // The row is this request's own (a random id), so the claim cannot be lost.
  const done = await finishClaimed(deps, caller, upload, staged.size);
  if (!done) throw conflict('This upload is already being finished.');
  return done;
}

export async function dropStaged(deps: Deps, staged: Staged): Promise<void> {
  await claimUpload(deps.db, staged.upload.id);
  await deps.storage.discard(staged.upload.storage_key);
}

/**
 * The upload `id`, opened if new — counted against the caller's max unfinished uploads (design
 * §6). `refuseNew` throws for a request that could not start an upload (a resume of bytes never
 * sent, a declared size over the quota): refused before the row exists, it leaves nothing behind
 * to count against the bound. `foundOpen`: the upload was open when this request looked.
 */
async function openUpload(
  deps: Deps,
  caller: Caller,
  id: string,
  originalName: string,
  totalChunks: number,
  fileSize: number | null,
  refuseNew?: () => void | Promise<void>,
): Promise<UploadRow & { foundOpen: boolean }> {
  const now = nowSeconds();
  let upload = await findUpload(deps.db, id);
  if (upload && upload.expires_at <= now) {
    // Expired but not yet swept: start over rather than resume bytes the sweep may take any moment.
    if (await claimUpload(deps.db, id)) await discardUploadBytes(deps, upload);
    upload = undefined;
  }
  const foundOpen = upload !== undefined;
  if (!upload) {
    // A request still on its way when its upload was cancelled opens nothing again (design §7).
    // Nor one of an upload that finished (completeFinish drops the upload and remembers the file
    // in one transaction): receiveChunk answers this 410 with that file, where a new upload would
    // have taken the chunk as the first of a second life.
    if (await wasCancelledOrFinished(deps.db, id, now)) throw uploadGone();
    await refuseNew?.();
    upload = await openBoundedUpload(deps, caller, {
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
    // A cancel that landed between the check above and this insert found no upload to drop and
    // answered 404; it was remembered before it looked, so it is seen here and the upload it
    // meant never opens (design §7: a cancelled upload stays cancelled).
    if (await wasCancelled(deps.db, id, now)) {
      if (await claimUpload(deps.db, id)) await discardUploadBytes(deps, upload);
      throw uploadGone();
    }
  }
  if (upload.total_chunks !== totalChunks) {
    throw conflict(`This upload was started with ${upload.total_chunks} chunks; totalChunks cannot change.`);
  }
  if (fileSize !== null && upload.file_size !== null && Number(upload.file_size) !== fileSize) {
    throw conflict(`This upload was started with a fileSize of ${upload.file_size} bytes; it cannot change.`);
  }
  return { ...upload, file_size: upload.file_size === null ? null : Number(upload.file_size), foundOpen };
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
  if (!upload || upload.expires_at <= nowSeconds()) notOwned();
  return upload;
}

function notOwned(): never {
  throw notFound('No unfinished upload with this uploadId.');
}

/** Status of an upload that became a file: every chunk in, and the file as its last request lost it. */
async function finishedStatus(deps: Deps, caller: Caller, rowId: string): Promise<UploadStatus | undefined> {
  const finished = await findFinished(deps.db, rowId, nowSeconds());
  if (!finished) return undefined;
  const { file, url } = doneAnswer(deps, caller, finished);
  return { success: true, totalChunks: finished.totalChunks, received: Array.from({ length: finished.totalChunks }, (_, i) => i), partial: null, file, url };
}

/** How long `status` waits for a writer of the upload to settle before answering (design §7). */
export const STATUS_SETTLE_MS = 3000;

/**
 * Design §7 `files/upload/status`: what is stored, so a client resends only the rest. It never
 * answers while a writer of the upload is settling: a request just cut off records its bytes
 * within moments, so status polls the leases until they are released (issue 8 item 3). A chunk
 * whose writer is still holding a lease after that — it is streaming, or its process died
 * without recording anything — is reported from the store itself.
 */
export async function uploadStatus(deps: Deps, caller: Caller, uploadId: string): Promise<UploadStatus> {
  const rowId = uploadRowId(caller.id, uploadId, '', 0);
  const early = await finishedStatus(deps, caller, rowId);
  if (early) return early;
  // The finish lists the file and drops the upload with its chunks in one transaction
  // (completeFinish), which may commit between any two of these reads: an upload, or its
  // chunks, gone since the first look is asked about again, so a client is never told 404 or
  // "nothing received" for a file being listed (it would send, or fail, what it no longer has).
  const upload = await findUpload(deps.db, rowId);
  if (!upload || upload.expires_at <= nowSeconds()) return (await finishedStatus(deps, caller, rowId)) ?? notOwned();
  const deadline = Date.now() + STATUS_SETTLE_MS;
  let chunks = await listChunks(deps.db, upload.id);
  while (chunks.some((c) => c.writer !== null && (c.leaseUntil ?? 0) >= Date.now()) && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 50));
    chunks = await listChunks(deps.db, upload.id);
  }
  const size = deps.uploadChunkSize;
  const partials: { chunkIndex: number; bytes: number }[] = [];
  for (const c of chunks) {
    if (c.complete) continue;
    const bytes = c.writer === null ? c.bytes : Math.max(c.bytes, await deps.storage.storedBytes(upload.storage_key, c.chunkIndex * size, (c.chunkIndex + 1) * size));
    if (bytes > 0) partials.push({ chunkIndex: c.chunkIndex, bytes });
  }
  if (!(await findUpload(deps.db, upload.id))) return (await finishedStatus(deps, caller, rowId)) ?? notOwned();
  return {
    success: true,
    totalChunks: upload.total_chunks,
    received: chunks.filter((c) => c.complete).map((c) => c.chunkIndex),
    partial: partials[0] ?? null,
  };
}

/**
 * What a request that failed midway answers: 410 when its upload was cancelled meanwhile (the
 * cancel is recorded before it discards the bytes) or went otherwise. A resumed chunk reads its
 * first bytes back from the store, and a cancel that discarded them under it left the read
 * without them: the store's error then (a 500, or on S3 a 503 "unavailable" for a piece deleted
 * between its listing and its read), for what a client's own cancel caused.
 */
async function goneOr(deps: Deps, id: string, err: unknown): Promise<unknown> {
  if (err instanceof HttpError && err.statusCode < 500) return err;
  try {
    if ((await wasCancelled(deps.db, id, nowSeconds())) || !(await findUpload(deps.db, id))) return uploadGone();
  } catch {
    // The database failing as well: the first error is the one to answer with.
  }
  return err;
}

export async function cancelUpload(deps: Deps, caller: Caller, uploadId: string): Promise<void> {
  // Remembered first, even when no request of the upload has arrived yet: one in flight that
  // lands after the cancel gets 410 instead of opening the upload again.
  await rememberCancel(deps.db, uploadRowId(caller.id, uploadId, '', 0), nowSeconds() + UPLOAD_TTL_SECONDS);
  const upload = await ownUpload(deps, caller, uploadId);
  if (await claimUpload(deps.db, upload.id)) await discardUploadBytes(deps, upload);
  else if (await findUpload(deps.db, upload.id)) throw conflict('This upload is being finished and can no longer be cancelled.');
}

/** An upload's bytes, wherever a finish cut short by a crash may have left them. */
export async function discardUploadBytes(deps: Deps, upload: Pick<UploadRow, 'storage_key' | 'finishing_until'>): Promise<void> {
  await deps.storage.discard(upload.storage_key);
  if (upload.finishing_until != null) await deps.storage.delete(upload.storage_key);
}
