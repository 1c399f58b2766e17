import { afterEach, describe, expect, it } from 'vitest';
import { DIALECTS } from '../../helpers/test-app.ts';
import { createHttpTestApp, sendMultipart, type HttpTestApp } from '../../helpers/upload.ts';

/**
 * Issue 8 item 14: the admin screen's hint says that with *Allow uploading* off nobody uploads,
 * admins included (src/features/admin/site-switches.tsx). This is the server side of that promise.
 */
describe.each(DIALECTS)('Allow uploading off on %s', (dialect) => {
  let t: HttpTestApp;
  afterEach(async () => t?.close());

  it('refuses an admin’s upload and URL upload with 503 too', async () => {
    t = await createHttpTestApp(dialect);
    await t.call('/api/v1/admin/update/settings', { setting: 'allow_uploading', value: false }, { token: t.admin.token });
    const up = await sendMultipart(`${t.apiUrl}/api/v1/files/upload`, { fields: { token: t.admin.token }, file: { data: Buffer.from('hello') } });
    expect(up.status).toBe(503);
    expect(up.body.error).toBe('Uploading is currently disabled.');
    const byUrl = await t.call('/api/v1/files/upload-url', { url: 'https://example.invalid/a.png' }, { token: t.admin.token });
    expect(byUrl.status).toBe(503);
    expect(await t.deps.db.selectFrom('files').select('id').execute()).toEqual([]);
  });
});
