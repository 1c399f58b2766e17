import crypto from 'node:crypto';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type * as Uploads from '../../../server/modules/files/uploads.repository.ts';
import { DIALECTS, type TestUser } from '../../helpers/test-app.ts';
import { createHttpTestApp, postJson, randomBytes, sendMultipart, sha256, type HttpTestApp } from '../../helpers/upload.ts';

const CHUNK = 1024;

/**
 * `status` reads an upload in steps (finished? the upload? its chunks?) while the request of
 * its last chunk may list the file and drop the upload in one transaction. A test lets that
 * finish commit right after one of status's reads: the interleaving is fixed, not timed.
 */
const afterRead = vi.hoisted(() => ({ next: null as { read: 'findFinished' | 'findUpload'; then: () => Promise<void> } | null }));
vi.mock('../../../server/modules/files/uploads.repository.ts', async (importOriginal) => {
  const real = await importOriginal<typeof Uploads>();
  const hold = async <T>(read: 'findFinished' | 'findUpload', result: T): Promise<T> => {
    const next = afterRead.next;
    if (next?.read === read) {
      afterRead.next = null;
      await next.then();
    }
    return result;
  };
  return {
    ...real,
    findFinished: async (...args: Parameters<typeof real.findFinished>) => hold('findFinished', await real.findFinished(...args)),
    findUpload: async (...args: Parameters<typeof real.findUpload>) => hold('findUpload', await real.findUpload(...args)),
  };
});

/**
 * Design §7: status tells a client what is stored, so it sends only the rest. Told "nothing
 * received" or 404 about a file being listed at that moment, the web client (which dropped its
 * copy of every acknowledged chunk) failed the upload with "The saved copy of this file is
 * incomplete", and a plain client would send the whole file again.
 */
describe.each(DIALECTS)('status asked while the last chunk lists the file, on %s', (dialect) => {
  let t: HttpTestApp;
  let user: TestUser;
  afterEach(async () => {
    afterRead.next = null;
    await t?.close();
  });

  /** Both chunks sent; the last one's request waits at the store's finalize until `release()`. */
  async function lastChunkFinishing() {
    t = await createHttpTestApp(dialect, { chunkSize: CHUNK });
    user = await t.createUser();
    const data = randomBytes(CHUNK + 300);
    const uploadId = crypto.randomUUID();
    const chunk = (i: number) => data.subarray(i * CHUNK, (i + 1) * CHUNK);
    const send = (i: number) =>
      sendMultipart(`${t.apiUrl}/api/v1/files/upload`, {
        fields: { token: user.token, uploadId, originalname: 'race.bin', totalChunks: 2, fileSize: data.length, chunkIndex: i, chunkHash: sha256(chunk(i)) },
        file: { data: chunk(i), filename: 'blob' },
      });
    expect((await send(0)).status).toBe(200);
    const storage = t.deps.storage;
    const finalize = storage.finalize.bind(storage);
    let reached!: () => void;
    const finalizing = new Promise<void>((resolve) => (reached = resolve));
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    storage.finalize = async (key, size) => {
      reached();
      await released;
      return finalize(key, size);
    };
    const last = send(1);
    await finalizing;
    /** Lets the finish list the file and waits for its answer. */
    const finish = async () => {
      release();
      const answer = await last;
      expect(answer.status).toBe(200);
    };
    return { uploadId, last, finish, send };
  }

  const status = (uploadId: string) => postJson(`${t.apiUrl}/api/v1/files/upload/status`, { token: user.token, uploadId });

  it('answers with the file when the finish commits after status found the upload, not "nothing received"', async () => {
    const { uploadId, last, finish } = await lastChunkFinishing();
    afterRead.next = { read: 'findUpload', then: finish };
    const asked = await status(uploadId);
    const url = (await last).body.url;
    expect(url).toMatch(/^http/);
    expect(asked.status).toBe(200);
    expect(asked.body).toMatchObject({ success: true, totalChunks: 2, received: [0, 1], partial: null, url });
  });

  it('answers with the file when the finish commits after status looked for a finished upload, not 404', async () => {
    const { uploadId, last, finish } = await lastChunkFinishing();
    afterRead.next = { read: 'findFinished', then: finish };
    const asked = await status(uploadId);
    const url = (await last).body.url;
    expect(asked.status, JSON.stringify(asked.body)).toBe(200);
    expect(asked.body).toMatchObject({ success: true, received: [0, 1], url });
  });

  it('still answers what is stored while the finish has not committed', async () => {
    const { uploadId, finish } = await lastChunkFinishing();
    const asked = await status(uploadId);
    expect(asked.status).toBe(200);
    expect(asked.body).toMatchObject({ success: true, totalChunks: 2, received: [0, 1], partial: null });
    expect(asked.body.url).toBeUndefined();
    await finish();
  });

  it('answers a chunk sent again after the finish committed with the file, opening no second upload', async () => {
    const { last, finish, send } = await lastChunkFinishing();
    // The client gave up on the last chunk's request and sends it again; the finish commits right
    // after that request found the upload still open.
    afterRead.next = { read: 'findUpload', then: finish };
    const again = await send(1);
    const url = (await last).body.url;
    expect(again.status, JSON.stringify(again.body)).toBe(200);
    expect(again.body).toMatchObject({ success: true, url });
    expect(await t.deps.db.selectFrom('uploads').select('id').execute()).toEqual([]);
  });
});
