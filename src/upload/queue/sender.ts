import { UPLOAD_FIELDS } from '../../../contract/upload-fields.ts';
import type { UploadRecord } from '../store/schema.ts';
import type { ChunkSource } from './chunk-source.ts';
import { isSendable } from './records.ts';
import { classifyAnswer } from './classify.ts';
import { acknowledgedBytes, NOTHING_RECEIVED, planResume, type ServerProgress } from './resume-plan.ts';
import type { Transport } from './transport.ts';

/** Worth another try later (network, 5xx, 429, checksum). */
export class RetryLater extends Error {
  constructor(
    message: string,
    readonly retryAfterMs?: number,
    readonly checksum = false,
  ) {
    super(message);
  }
}
/** The server refused for good: the upload fails with its words. */
export class Stop extends Error {}
/** 401: the token is no longer valid; the upload waits for its owner to sign in again (issue 11 item 1). */
export class SignedOut extends Error {}

export interface SendJob {
  transport: Transport;
  apiUrl: string;
  token: string;
  record: UploadRecord;
  source: ChunkSource;
  signal: AbortSignal;
  /** The latest record (paused, detached, removed meanwhile?). */
  current(): Promise<UploadRecord | undefined>;
  /** Bytes the server holds; `url` once it answered with the link. */
  acknowledged(bytes: number, url?: string): Promise<void>;
  /** Bytes of the request in flight sent so far (shown, never counted as done). */
  onSent(sent: number): void;
  /** A chunk was accepted: backoff starts again from the beginning, and a retry's reason goes. */
  onProgress(): void | Promise<void>;
}

function check(answer: Awaited<ReturnType<Transport['postJson']>>) {
  if (answer.status === 401) throw new SignedOut('Sign in again to continue this upload');
  const outcome = classifyAnswer(answer);
  if (outcome.kind === 'fatal') throw new Stop(outcome.message);
  if (outcome.kind === 'retry') throw new RetryLater(outcome.reason, outcome.retryAfterMs, outcome.checksum);
  return outcome.body;
}

/** `files/upload/status` (design §7): what the server already holds of this upload. */
export async function serverProgress(transport: Transport, apiUrl: string, token: string, uploadId: string, signal: AbortSignal): Promise<ServerProgress> {
  const answer = await transport.postJson(`${apiUrl}/api/v1/files/upload/status`, { token, uploadId }, signal);
  // The server has never seen it (or it expired): everything is still to send.
  if (answer.status === 404) return NOTHING_RECEIVED;
  const body = check(answer);
  const received = Array.isArray(body.received) ? body.received.filter((n): n is number => Number.isInteger(n)) : [];
  const p = body.partial as { chunkIndex?: unknown; bytes?: unknown } | null | undefined;
  const partial = p && Number.isInteger(p.chunkIndex) && Number.isInteger(p.bytes) ? { chunkIndex: p.chunkIndex as number, bytes: p.bytes as number } : null;
  return typeof body.url === 'string' ? { received, partial, url: body.url } : { received, partial };
}

/**
 * One attempt at an upload: ask the server what it holds, then send only what it lacks, chunk
 * by chunk in order, the text fields before the file part (design §7). Resolves when the
 * server answered with the link; throws RetryLater, Stop, SignedOut, SourceLost or AbortError.
 */
export async function sendUpload(job: SendJob): Promise<void> {
  const { record, source, signal, transport, apiUrl, token } = job;
  const progress = await serverProgress(transport, apiUrl, token, record.id, signal);
  const { size, chunkSize, totalChunks } = record;
  // The last answer was lost on its way (a dropped connection, a crash): the file is listed.
  if (progress.url !== undefined) {
    await job.acknowledged(size, progress.url);
    return;
  }
  await job.acknowledged(acknowledgedBytes(totalChunks, size, chunkSize, progress));
  const last = totalChunks - 1;
  // The last chunk's copy stays until a link arrives: it is what finishes the upload.
  for (const index of progress.received) if (index !== last) await source.release(index).catch(() => undefined);
  const steps = planResume(totalChunks, size, chunkSize, progress);
  // Every chunk is stored but nothing is listed: a finish cut short (a store outage, a restart
  // while listing). The last chunk sent again in full is what takes it up on the server
  // (finish-upload.ts; design §7: a chunk sent twice is harmless).
  if (steps.length === 0) steps.push({ index: last, offset: 0 });

  for (const step of steps) {
    const current = await job.current();
    if (!current || !isSendable(current)) throw new DOMException('Stopped', 'AbortError');
    const chunk = await source.read(step.index, signal);
    // Equal to the chunk's size: every byte is stored, and an empty part completes it.
    const offset = step.offset <= chunk.data.size ? step.offset : 0;
    const fields: [string, string][] = [
      [UPLOAD_FIELDS.uploadId, record.id],
      [UPLOAD_FIELDS.fileSize, String(size)],
      [UPLOAD_FIELDS.chunkHash, chunk.hash],
      [UPLOAD_FIELDS.chunkIndex, String(step.index)],
      [UPLOAD_FIELDS.totalChunks, String(totalChunks)],
      [UPLOAD_FIELDS.originalname, record.name],
    ];
    if (offset > 0) fields.push([UPLOAD_FIELDS.chunkOffset, String(offset)]);
    fields.push([UPLOAD_FIELDS.token, token]);
    const answer = await transport.postMultipart({
      url: `${apiUrl}/api/v1/files/upload`,
      fields,
      fileField: UPLOAD_FIELDS.file,
      file: offset > 0 ? chunk.data.slice(offset) : chunk.data,
      filename: record.name,
      signal,
      onProgress: job.onSent,
    });
    const body = check(answer);
    const url = typeof body.url === 'string' ? body.url : undefined;
    if (step.index !== last || url !== undefined) await source.release(step.index).catch(() => undefined);
    // A last chunk sent again that finished nothing (another request is listing the file) is no
    // progress: backoff keeps growing rather than sending it again at once.
    if (url !== undefined || !progress.received.includes(step.index)) await job.onProgress();
    if (url !== undefined) {
      await job.acknowledged(size, url);
      return;
    }
    await job.acknowledged(Math.min(size, (step.index + 1) * chunkSize));
  }
  // Every chunk answered but no link: another request is finishing the file, or the server lost
  // part of it; status says which on the next attempt.
  throw new RetryLater('Waiting for the server to finish the file');
}
