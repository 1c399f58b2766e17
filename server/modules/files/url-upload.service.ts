import type { UploadDoneResponse } from '../../../contract/files.ts';
import type { Deps } from '../../deps.ts';
import { HttpError, badRequest, tooLarge } from '../../http/errors.ts';
import { UrlRefusedError, safeFetch, type SafeFetchOptions } from '../../lib/safe-fetch.ts';
import type { Caller } from '../auth/caller.repository.ts';
import { cleanOriginalName } from './file-kind.ts';
import { tooLargeMessage } from './finish-upload.ts';
import { assertUploadsOpen, receiveWhole } from './upload.service.ts';

/**
 * The slowest remote body kept (issue 8 item 5): averaged over 30 s windows, so a server
 * sending a byte every 10 s is cut within half a minute instead of holding a fetch for 15.
 */
const MIN_REMOTE_BYTES_PER_SECOND = 1024;

/**
 * Fetches running per user in this process. A fetch holds a socket, a storage write and up to
 * 15 minutes; one user held 43 at once (issue 8 item 5). Counted in memory: each API process
 * bounds its own share (README "Deployment at scale").
 */
const running = new Map<string, number>();

/**
 * `files/upload-url` (design §7): fetched server-side under the SSRF rules of safeFetch, then
 * the same size, type and naming rules as any upload.
 */
export async function uploadFromUrl(deps: Deps, caller: Caller, rawUrl: string, fetchOptions: Partial<SafeFetchOptions> = {}): Promise<UploadDoneResponse> {
  await assertUploadsOpen(deps);
  // Design §6: Site Settings → Upload limits (default 3).
  const max = (await deps.settings.limits()).max_url_fetches;
  const mine = running.get(caller.id) ?? 0;
  if (mine >= max) {
    throw new HttpError(429, `You already have ${mine} URL uploads running; at most ${max} may run at once. Wait for one to finish.`, {}, { 'retry-after': '10' });
  }
  running.set(caller.id, mine + 1);
  try {
    return await fetchAndStore(deps, caller, rawUrl, fetchOptions);
  } finally {
    const left = (running.get(caller.id) ?? 1) - 1;
    if (left <= 0) running.delete(caller.id);
    else running.set(caller.id, left);
  }
}

async function fetchAndStore(deps: Deps, caller: Caller, rawUrl: string, fetchOptions: Partial<SafeFetchOptions>): Promise<UploadDoneResponse> {
  let fetched;
  try {
    fetched = await safeFetch(rawUrl, { allowPrivate: deps.config.urlUploadAllowPrivate, minBytesPerSecond: MIN_REMOTE_BYTES_PER_SECOND, ...fetchOptions });
  } catch (err) {
    if (err instanceof UrlRefusedError) throw badRequest(err.message);
    throw err;
  }
  // Why the body stopped (deadline, too slow), so the refusal can say so.
  let cut: UrlRefusedError | null = null;
  fetched.stream.once('error', (err) => {
    if (err instanceof UrlRefusedError) cut = err;
  });
  const max = await deps.settings.maxFileSizeBytes();
  if (fetched.length !== null && fetched.length > max) {
    fetched.stream.destroy();
    throw tooLarge(await tooLargeMessage(deps));
  }
  const name = cleanOriginalName(safeDecode(fetched.finalUrl.pathname.split('/').pop() ?? ''));
  try {
    return await receiveWhole(deps, caller, name, fetched.stream);
  } catch (err) {
    const reason = cut as UrlRefusedError | null;
    if (reason && err instanceof HttpError && err.statusCode === 400) throw badRequest(reason.message);
    throw err;
  } finally {
    fetched.stream.destroy();
  }
}

function safeDecode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}
