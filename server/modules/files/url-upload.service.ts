import type { UploadDoneResponse } from '../../../contract/files.ts';
import type { Deps } from '../../deps.ts';
import { badRequest, tooLarge } from '../../http/errors.ts';
import { UrlRefusedError, safeFetch, type SafeFetchOptions } from '../../lib/safe-fetch.ts';
import type { Caller } from '../auth/caller.repository.ts';
import { cleanOriginalName } from './file-kind.ts';
import { tooLargeMessage } from './finish-upload.ts';
import { assertUploadsOpen, receiveWhole } from './upload.service.ts';

/**
 * `files/upload-url` (design §7): fetched server-side under the SSRF rules of safeFetch, then
 * the same size, type and naming rules as any upload.
 */
export async function uploadFromUrl(deps: Deps, caller: Caller, rawUrl: string, fetchOptions: Partial<SafeFetchOptions> = {}): Promise<UploadDoneResponse> {
  await assertUploadsOpen(deps);
  let fetched;
  try {
    fetched = await safeFetch(rawUrl, { allowPrivate: deps.config.urlUploadAllowPrivate, ...fetchOptions });
  } catch (err) {
    if (err instanceof UrlRefusedError) throw badRequest(err.message);
    throw err;
  }
  const max = await deps.settings.maxFileSizeBytes();
  if (fetched.length !== null && fetched.length > max) {
    fetched.stream.destroy();
    throw tooLarge(await tooLargeMessage(deps));
  }
  const name = cleanOriginalName(safeDecode(fetched.finalUrl.pathname.split('/').pop() ?? ''));
  try {
    return await receiveWhole(deps, caller, name, fetched.stream);
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
