import { backoffDelay, DEFAULT_BACKOFF, type BackoffOptions } from './backoff.ts';
import { CopyInterrupted, SourceLost, type ChunkSource } from './chunk-source.ts';
import type { NetworkSignal } from './environment.ts';
import { ownedBy, type QueueAuth } from './owner.ts';
import type { ProgressView } from './progress.ts';
import type { RecordBook } from './record-book.ts';
import { isSendable } from './records.ts';
import { RetryLater, sendUpload, SignedOut, Stop } from './sender.ts';
import type { Transport } from './transport.ts';
import type { Wakeups } from './wakeups.ts';

export interface RunDeps {
  book: RecordBook;
  auth: () => Promise<QueueAuth>;
  transport: Transport;
  network: NetworkSignal;
  wakeups: Wakeups;
  progress: ProgressView;
  backoff?: BackoffOptions;
  random?: () => number;
  maxChecksumRetries?: number;
  /** A token the server refused with 401: nothing is sent with it again (shared by every run). */
  refused: { token: string | null };
  acknowledged(id: string, bytes: number, url?: string): Promise<void>;
}

const isAbort = (error: unknown) => error instanceof DOMException && error.name === 'AbortError';

/**
 * One upload, attempt after attempt, until it is done, failed, paused, cancelled, interrupted,
 * handed over, no longer the signed-in user's, or `signal` aborts (issue 5 retry rules:
 * exponential backoff reset after progress, no tries while offline, Retry-After honoured,
 * checksum mismatches at most `maxChecksumRetries` times).
 */
export async function runUpload(id: string, source: ChunkSource, signal: AbortSignal, deps: RunDeps): Promise<void> {
  const { book } = deps;
  const setState = (state: 'offline' | 'waiting' | 'uploading' | 'interrupted') => book.update(id, (r) => (isSendable(r) ? { ...r, state } : r));
  let failures = 0;
  let checksumFailures = 0;
  /** Whether the record may carry a retry's reason (UploadItem.notice), cleared once a chunk is accepted. */
  let noticed = (await book.get(id))?.notice !== undefined;
  while (!signal.aborted) {
    const record = await book.get(id);
    const auth = await deps.auth();
    if (!record || !isSendable(record) || !ownedBy(record, auth)) return;
    if (!deps.network.isOnline()) {
      await setState('offline');
      await deps.wakeups.change(signal);
      continue;
    }
    if (auth.token === deps.refused.token) {
      // Signed out elsewhere: wait for the owner to sign in again, never fail it (issue 11 item 1).
      if (record.state !== 'waiting') await setState('waiting');
      await deps.wakeups.change(signal);
      continue;
    }
    if (record.state !== 'uploading') await setState('uploading');
    try {
      await sendUpload({
        transport: deps.transport,
        apiUrl: auth.apiUrl,
        token: auth.token!,
        record,
        source,
        signal,
        current: () => book.get(id),
        acknowledged: (bytes, url) => deps.acknowledged(id, bytes, url),
        onSent: (sent) => deps.progress.sent(id, sent),
        onProgress: async () => {
          failures = 0;
          if (!noticed) return;
          noticed = false;
          await book.update(id, ({ notice: _notice, ...rest }) => rest);
        },
      });
      return;
    } catch (error) {
      deps.progress.settled(id);
      if (signal.aborted || isAbort(error)) return;
      if (error instanceof SignedOut) {
        deps.refused.token = auth.token;
        continue;
      }
      if (error instanceof CopyInterrupted) {
        await setState('interrupted');
        return;
      }
      if (error instanceof Stop || error instanceof SourceLost) {
        await book.update(id, (r) => (isSendable(r) ? { ...r, state: 'failed', error: error.message } : r));
        return;
      }
      const retry = error instanceof RetryLater ? error : new RetryLater('Network error');
      if (retry.checksum && ++checksumFailures > (deps.maxChecksumRetries ?? 5)) {
        await book.update(id, (r) => (isSendable(r) ? { ...r, state: 'failed', error: retry.message } : r));
        return;
      }
      const online = deps.network.isOnline();
      if (!online) {
        await setState('offline');
        continue;
      }
      // The server's words (uploads switched off, maintenance, out of disk, too many unfinished
      // uploads) are what the row shows while it waits to try again (spec §8: they are shown).
      noticed = true;
      await book.update(id, (r) => (isSendable(r) ? { ...r, state: 'uploading', notice: retry.message } : r));
      const delay = retry.retryAfterMs ?? backoffDelay(failures, deps.backoff ?? DEFAULT_BACKOFF, deps.random);
      failures += 1;
      await deps.wakeups.sleep(delay, signal);
    }
  }
}
