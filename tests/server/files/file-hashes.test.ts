import { afterEach, describe, expect, it } from 'vitest';
import { leasedHashBackfill } from '../../../server/jobs.ts';
import { nowSeconds } from '../../../server/lib/ids.ts';
import { DIALECTS } from '../../helpers/test-app.ts';
import { createHttpTestApp, randomBytes, sendMultipart, sha256, type HttpTestApp } from '../../helpers/upload.ts';

/** Issue 10: every file gets its SHA-256 recorded (migration and backups verify by it), once across the deployment. */
describe.each(DIALECTS)('file hashes on %s', (dialect) => {
  let t: HttpTestApp;
  afterEach(async () => t?.close());

  it('the background job records the SHA-256 of every new file, run by one process per period', async () => {
    t = await createHttpTestApp(dialect, { chunkSize: 1024 });
    const user = await t.createUser();
    const expected = new Map<string, string>();
    for (const size of [1, 1500, 70_000]) {
      const data = randomBytes(size);
      const res = await sendMultipart(`${t.apiUrl}/api/v1/files/upload`, { fields: { token: user.token, originalname: `h${size}.bin` }, file: { data } });
      expect(res.status).toBe(200);
      expected.set((res.body.file as { actual_name: string }).actual_name, sha256(data));
    }
    const now = nowSeconds();
    const [a, b] = await Promise.all([leasedHashBackfill(t.deps, () => false, now, 'api-1'), leasedHashBackfill(t.deps, () => false, now, 'api-2')]);
    expect([a, b].filter((r) => r !== null)).toEqual([3]);
    const rows = await t.deps.db.selectFrom('files').select(['actual_name', 'sha256']).execute();
    expect(Object.fromEntries(rows.map((r) => [r.actual_name, r.sha256]))).toEqual(Object.fromEntries(expected));
  });
});
