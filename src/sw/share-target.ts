import { UploadStore } from '../upload/store/upload-store.ts';
import { newUploadRecord, writeFileChunks } from '../upload/store/write-chunks.ts';
import { fingerprintOf } from '../upload/store/fingerprint.ts';
import { CHUNK_SIZE } from '../../contract/upload-fields.ts';
import { SHARE_FAILED_REDIRECT, SHARED_REDIRECT } from '../../contract/site-routes.ts';

const writeLock = (id: string) => `stash-upload-write:${id}`;

/**
 * Issue 5: every shared file is in the IndexedDB queue before the answer goes out, so nothing
 * is lost if the page never opens; the page's upload worker (or Background Sync) sends it.
 * The answer is a 303, so a reload of the dashboard does not post the files again.
 */
export async function acceptShare(request: Request, notifyChanged: () => void): Promise<Response> {
  let store: UploadStore | null = null;
  try {
    const form = await request.formData();
    const files = form.getAll('file').filter((value): value is File => typeof value !== 'string');
    store = await UploadStore.open();
    const auth = await store.getAuth();
    const chunkSize = auth?.chunkSize ?? CHUNK_SIZE;
    for (const file of files) {
      // Issue 11 item 1: a share belongs to whoever is signed in (signed out: to the next to sign in).
      const owner = auth?.token ? (auth.owner ?? undefined) : undefined;
      const record = { ...newUploadRecord(file, chunkSize, 'share', owner), ...(await fingerprintOf(file)) };
      // The lock tells a sender in a page that this copy is still being written (see storeSource).
      await navigator.locks.request(writeLock(record.id), async () => {
        await store!.put(record);
        notifyChanged();
        await writeFileChunks(store!, record, file, notifyChanged);
      });
    }
    return Response.redirect(new URL(SHARED_REDIRECT, self.location.origin).href, 303);
  } catch {
    // Quota or a broken form: the page says so, the user can still pick the files.
    return Response.redirect(new URL(SHARE_FAILED_REDIRECT, self.location.origin).href, 303);
  } finally {
    store?.close();
  }
}
