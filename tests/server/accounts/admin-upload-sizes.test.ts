import { afterEach, describe, expect, it } from 'vitest';
import { DIALECTS, createTestApp, type TestApp } from '../../helpers/test-app.ts';

/**
 * Max file size against max unfinished upload size (settings/upload-sizes.ts): a file's bytes
 * count against the unfinished bound until it is listed, so a file larger than the bound could
 * never be uploaded.
 */
describe.each(DIALECTS)('max file size against max unfinished upload size on %s (design §6)', (dialect) => {
  let t: TestApp;
  afterEach(async () => t?.close());
  const as = (path: string, body: Record<string, unknown>) => t.call<Record<string, unknown>>(path, body, { token: t.admin.token });
  const setMaxFileSize = (value: number) => as('/api/v1/admin/set/maxfilesize', { value });
  const setUnfinishedSize = (value: number) => as('/api/v1/admin/set/limit', { setting: 'max_unfinished_size', value });

  /** Everything an admin save could have changed: the stored rows, and what the API answers. */
  const state = async () => ({
    rows: (await t.deps.db.selectFrom('settings').select(['key', 'value']).orderBy('key').execute()).map((r) => `${r.key}=${r.value}`),
    settings: (await t.call('/api/v1/utils/settings', {}, { token: t.admin.token })).body,
    limits: (await as('/api/v1/admin/get/limits', {})).body,
  });

  it('refuses raising max file size above the stored max unfinished upload size, and changes nothing', async () => {
    t = await createTestApp(dialect);
    const before = await state();
    const res = await setMaxFileSize(2049);
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      success: false,
      error: 'Max file size (2049 MB) cannot be larger than max unfinished upload size (2048 MB): files between the two could never be uploaded.',
    });
    expect(await state()).toEqual(before);
    expect(before.settings).toMatchObject({ settings: { max_file_size: 1024 } });
  });

  it('refuses lowering max unfinished upload size below the stored max file size, and changes nothing', async () => {
    t = await createTestApp(dialect);
    expect((await setMaxFileSize(500)).status).toBe(200);
    const before = await state();
    const res = await setUnfinishedSize(499);
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      success: false,
      error: 'Max file size (500 MB) cannot be larger than max unfinished upload size (499 MB): files between the two could never be uploaded.',
    });
    expect(await state()).toEqual(before);
    expect(before.limits).toMatchObject({ limits: { max_unfinished_size: 2048 } });
  });

  it('checks against the stored value, not one this process read a moment ago', async () => {
    t = await createTestApp(dialect);
    // Read (and cached) here; then another API process raises max file size in the database.
    expect((await t.deps.settings.get()).max_file_size).toBe(1024);
    await t.deps.db.updateTable('settings').set({ value: '1900' }).where('key', '=', 'max_file_size').execute();
    const res = await setUnfinishedSize(1800);
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('Max file size (1900 MB) cannot be larger than max unfinished upload size (1800 MB): files between the two could never be uploaded.');
    t.deps.settings.invalidate();
    expect((await t.deps.settings.limits()).max_unfinished_size).toBe(2048);
  });

  it('takes max unfinished upload size below one 80 MB chunk when max file size is below it too', async () => {
    t = await createTestApp(dialect);
    // Every file then goes in one chunk, counted as its own size (upload-limits.test.ts).
    expect((await setMaxFileSize(10)).status).toBe(200);
    expect((await setUnfinishedSize(10)).status).toBe(200);
    expect((await t.deps.settings.limits()).max_unfinished_size).toBe(10);
  });

  it('takes a save that keeps the two consistent, either way round, and leaves the other limits alone', async () => {
    t = await createTestApp(dialect);
    // Equal is fine: the largest file fits the bound exactly.
    expect((await setMaxFileSize(2048)).body).toEqual({ success: true, message: 'Maximum file size updated.' });
    expect((await setUnfinishedSize(4096)).body).toEqual({ success: true, message: 'Limit updated.' });
    expect((await setMaxFileSize(4000)).status).toBe(200);
    expect((await setUnfinishedSize(4000)).status).toBe(200);
    expect((await as('/api/v1/admin/set/limit', { setting: 'max_unfinished_uploads', value: 2 })).status).toBe(200);
    expect((await t.deps.settings.get()).max_file_size).toBe(4000);
    expect(await t.deps.settings.limits()).toMatchObject({ max_unfinished_size: 4000, max_unfinished_uploads: 2 });
  });

  it('of two saves at once that each fit the stored other but not each other, takes exactly one', async () => {
    t = await createTestApp(dialect);
    for (let round = 0; round < 5; round++) {
      // Max file size 1024 and the bound 2048 stored: 1500 fits 2048, and 1024 fits 1200, but 1500 does not fit 1200.
      const answers = await Promise.all([setMaxFileSize(1500), setUnfinishedSize(1200)]);
      expect(answers.map((a) => a.status).sort()).toEqual([200, 400]);
      t.deps.settings.invalidate();
      const fileSize = (await t.deps.settings.get()).max_file_size;
      const unfinished = (await t.deps.settings.limits()).max_unfinished_size;
      expect(fileSize).toBeLessThanOrEqual(unfinished);
      expect((await setUnfinishedSize(2048)).status).toBe(200);
      expect((await setMaxFileSize(1024)).status).toBe(200);
    }
  });
});
