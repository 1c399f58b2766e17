import type { QueueAuth } from './owner.ts';
import type { HttpAnswer, Transport } from './transport.ts';

/** What became of a cancel on the server (design §7 `files/upload/cancel`). */
export type CancelOutcome =
  /** Nothing of the upload is left on the server (dropped, never seen, expired, or unreachable). */
  | { kind: 'dropped' }
  /** It had become a file before the cancel arrived, and that file could not be deleted. */
  | { kind: 'listed'; url: string }
  /** Still being finished after `finishWaitMs`: ask again later. */
  | { kind: 'finishing' };

export interface CancelDeps {
  transport: Transport;
  /** Waits before asking again while the server is still finishing the file. */
  sleep(ms: number): Promise<void>;
  /** How long to wait for a finish in progress to end (its lease bounds it on the server). */
  finishWaitMs?: number;
  /** The queue is closing: stop waiting for a finish (the next start asks again). */
  signal: AbortSignal;
}

const REQUEST_TIMEOUT_MS = 10_000;
const FINISH_POLL_MS = 500;
export const FINISH_WAIT_MS = 60_000;

/**
 * Issue 11 item 4, cancel racing the last chunk: the request of the last chunk is aborted, but
 * the server may already hold every byte and be listing the file (cancel answers 409) or have
 * listed it (404: no unfinished upload). The user asked for the file not to be online, so the
 * file the upload became is deleted (`files/delete`, the files page's own call). Only when that
 * is refused does the caller show the upload as done, with its link.
 */
export async function cancelOnServer(deps: CancelDeps, auth: Pick<QueueAuth, 'apiUrl'> & { token: string }, uploadId: string): Promise<CancelOutcome> {
  const post = (path: string, body: Record<string, unknown>): Promise<HttpAnswer | null> =>
    deps.transport.postJson(`${auth.apiUrl}/api/v1/${path}`, { token: auth.token, ...body }, AbortSignal.timeout(REQUEST_TIMEOUT_MS)).catch(() => null);
  const deadline = Date.now() + (deps.finishWaitMs ?? FINISH_WAIT_MS);
  for (;;) {
    const cancelled = await post('files/upload/cancel', { uploadId });
    // Unreachable: what the server kept expires in 24 h (design §7); nothing more can be done here.
    if (!cancelled || (cancelled.status >= 200 && cancelled.status < 300)) return { kind: 'dropped' };
    if (cancelled.status !== 404 && cancelled.status !== 409) return { kind: 'dropped' };
    // Gone or being finished: status says whether it became a file.
    const status = await post('files/upload/status', { uploadId });
    const body = (status?.body ?? null) as { url?: unknown } | null;
    if (status && status.status === 200 && typeof body?.url === 'string') {
      return (await deleteFile(post, body.url)) ? { kind: 'dropped' } : { kind: 'listed', url: body.url };
    }
    // 404: nothing unfinished and no file; 410: its file was deleted since.
    if (status && (status.status === 404 || status.status === 410)) return { kind: 'dropped' };
    // Still unfinished: a finish in progress (409), which lists the file or, failing, leaves the
    // upload to be cancelled on the next ask. Unanswered: it may have become a file; ask later.
    if (!status || Date.now() >= deadline || deps.signal.aborted) return { kind: 'finishing' };
    await deps.sleep(FINISH_POLL_MS);
  }
}

async function deleteFile(post: (path: string, body: Record<string, unknown>) => Promise<HttpAnswer | null>, url: string): Promise<boolean> {
  const answer = await post('files/delete', { filePath: url });
  const body = answer?.body as { success?: unknown } | null | undefined;
  return answer !== null && answer.status >= 200 && answer.status < 300 && body?.success !== false;
}
