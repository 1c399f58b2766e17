import crypto from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { leasedSweep } from '../../../server/jobs.ts';
import { nowSeconds } from '../../../server/lib/ids.ts';
import { DIALECTS } from '../../helpers/test-app.ts';
import { createHttpTestApp, randomBytes, sendMultipart, type HttpTestApp } from '../../helpers/upload.ts';

/** Issue 10: the expiry sweep runs once across the deployment per period, whichever process ticks first. */
describe.each(DIALECTS)('sweep lease on %s', (dialect) => {
  let t: HttpTestApp;
  afterEach(async () => t?.close());

  it('of several processes ticking at once exactly one sweeps; the next period another may', async () => {
    t = await createHttpTestApp(dialect, { chunkSize: 1024 });
    const user = await t.createUser();
    for (let i = 0; i < 3; i += 1) {
      const res = await sendMultipart(`${t.apiUrl}/api/v1/files/upload`, {
        fields: { token: user.token, uploadId: crypto.randomUUID(), originalname: 'x.bin', totalChunks: 2, chunkIndex: 0 },
        file: { data: randomBytes(1024) },
      });
      expect(res.status).toBe(200);
    }
    const later = nowSeconds() + 2 * 24 * 60 * 60;
    const results = await Promise.all(['api-1', 'api-2', 'api-3', 'api-4'].map((holder) => leasedSweep(t.deps, later, holder)));
    expect(results.filter((r) => r !== null)).toEqual([3]);
    expect(await t.store.partialBytes()).toBe(0);

    // Within the period nobody else sweeps; once it is over, any process may.
    expect(await leasedSweep(t.deps, later + 60, 'api-2')).toBeNull();
    expect(await leasedSweep(t.deps, later + 600, 'api-2')).toBe(0);
  });
});
