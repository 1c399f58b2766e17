import crypto from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { sweepExpiredUploads } from '../../../server/jobs.ts';
import { nowSeconds } from '../../../server/lib/ids.ts';
import { DIALECTS } from '../../helpers/test-app.ts';
import { createHttpTestApp, postJson, randomBytes, sendMultipart, type HttpTestApp } from '../../helpers/upload.ts';

const CHUNK = 1024;
const DAY = 24 * 60 * 60;

describe.each(DIALECTS)('unfinished uploads on %s (design §7)', (dialect) => {
  let t: HttpTestApp;
  afterEach(async () => t?.close());

  // Unfinished bytes in the store (local disk, or S3 under TEST_STORAGE=s3).
  const diskBytes = (_sub: 'partial'): Promise<number> => t.store.partialBytes();

  it('expires an unfinished upload 24 h after its last chunk and reclaims its bytes', async () => {
    t = await createHttpTestApp(dialect, { chunkSize: CHUNK });
    const user = await t.createUser();
    const first = crypto.randomUUID();
    const second = crypto.randomUUID();
    const before = nowSeconds();
    for (const uploadId of [first, second]) {
      const res = await sendMultipart(`${t.apiUrl}/api/v1/files/upload`, {
        fields: { token: user.token, uploadId, originalname: 'x.bin', totalChunks: 3, chunkIndex: 0 },
        file: { data: randomBytes(CHUNK) },
      });
      expect(res.status).toBe(200);
    }
    expect(await diskBytes('partial')).toBe(2 * CHUNK);
    // Each chunk sets the expiry a day ahead (design §7).
    const rows = await t.deps.db.selectFrom('uploads').select(['expires_at']).execute();
    for (const r of rows) expect(Number(r.expires_at)).toBeGreaterThanOrEqual(before + DAY);

    // Nothing is due yet.
    expect(await sweepExpiredUploads(t.deps, before + DAY - 60)).toBe(0);
    expect(await diskBytes('partial')).toBe(2 * CHUNK);

    // A day and a bit later both are due: rows and bytes go.
    expect(await sweepExpiredUploads(t.deps, nowSeconds() + DAY + 1)).toBe(2);
    expect(await diskBytes('partial')).toBe(0);
    for (const uploadId of [first, second]) {
      expect((await postJson(`${t.apiUrl}/api/v1/files/upload/status`, { token: user.token, uploadId })).status).toBe(404);
    }
    expect(await t.deps.db.selectFrom('upload_chunks').selectAll().execute()).toEqual([]);
  });

  it('keeps an upload whose expiry was refreshed by a later chunk', async () => {
    t = await createHttpTestApp(dialect, { chunkSize: CHUNK });
    const user = await t.createUser();
    const uploadId = crypto.randomUUID();
    const send = (chunkIndex: number) =>
      sendMultipart(`${t.apiUrl}/api/v1/files/upload`, {
        fields: { token: user.token, uploadId, originalname: 'x.bin', totalChunks: 3, chunkIndex },
        file: { data: randomBytes(CHUNK) },
      });
    await send(0);
    // Pretend chunk 0 came 23 h ago, then chunk 1 arrives now.
    await t.deps.db.updateTable('uploads').set({ expires_at: nowSeconds() + 3600 }).execute();
    await send(1);
    expect(await sweepExpiredUploads(t.deps, nowSeconds() + 2 * 3600)).toBe(0);
    const status = await postJson(`${t.apiUrl}/api/v1/files/upload/status`, { token: user.token, uploadId });
    expect(status.body).toMatchObject({ received: [0, 1] });
  });
});
