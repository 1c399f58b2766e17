import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { LocalStorage } from '../../../server/storage/local.ts';
import { StorageError } from '../../../server/storage/storage.ts';
import type { Storage } from '../../../server/storage/storage.ts';
import { DIALECTS } from '../../helpers/test-app.ts';
import { createHttpTestApp, postJson, randomBytes, sendMultipart, sha256, type HttpTestApp } from '../../helpers/upload.ts';

const CHUNK = 64 * 1024;

/** A store that fails the next finalize the way S3 does when it throttles (503 SlowDown). */
class FlakyFinalize extends LocalStorage implements Storage {
  failNext = false;

  override async finalize(key: string, size: number): Promise<void> {
    if (this.failNext) {
      this.failNext = false;
      throw new StorageError(503, 'The file store is unavailable right now; please try again shortly.', 'SlowDown');
    }
    return super.finalize(key, size);
  }
}

describe.each(DIALECTS)('a store outage while an upload finishes on %s (issue 10)', (dialect) => {
  let t: HttpTestApp;
  let root: string;
  afterEach(async () => {
    await t?.close();
    fs.rmSync(root, { recursive: true, force: true });
  });

  it('answers 503 with retry, keeps every byte, and the resent last chunk lists the file whole', async () => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'stash-finish-'));
    const store = new FlakyFinalize(root);
    t = await createHttpTestApp(dialect, { chunkSize: CHUNK, storage: store });
    const user = await t.createUser();
    const data = randomBytes(CHUNK + 5000);
    const uploadId = crypto.randomUUID();
    const send = (i: number) =>
      sendMultipart(`${t.apiUrl}/api/v1/files/upload`, {
        fields: { token: user.token, uploadId, originalname: 'outage.bin', totalChunks: 2, fileSize: data.length, chunkIndex: i },
        file: { data: data.subarray(i * CHUNK, (i + 1) * CHUNK) },
      });

    expect((await send(0)).status).toBe(200);
    store.failNext = true;
    const failed = await send(1);
    expect(failed.status).toBe(503);
    expect(failed.body).toMatchObject({ success: false, retry: true });
    expect(await t.deps.db.selectFrom('files').select('id').execute()).toHaveLength(0);
    const status = await postJson(`${t.apiUrl}/api/v1/files/upload/status`, { token: user.token, uploadId });
    expect(status.body).toMatchObject({ received: [0, 1] });

    const retried = await send(1);
    expect(retried.status).toBe(200);
    const res = await fetch(`${t.filesUrl}/${(retried.body.file as { actual_name: string }).actual_name}`);
    expect(sha256(Buffer.from(await res.arrayBuffer()))).toBe(sha256(data));
  });
});
