import { afterEach, describe, expect, it } from 'vitest';
import { DIALECTS, createTestApp, type TestApp } from '../../helpers/test-app.ts';

/**
 * Issue 8 item 7: caps checked by "count, then insert" hold only under a lock. PostgreSQL runs
 * these requests on separate pooled connections at once, which is where the cap used to break.
 */
describe.each(DIALECTS)('per-user caps under concurrent requests on %s', (dialect) => {
  let t: TestApp;
  afterEach(async () => t?.close());

  it('30 API-key generates at once leave exactly the cap of 10 keys', async () => {
    t = await createTestApp(dialect);
    const u = await t.createUser();
    const results = await Promise.all(Array.from({ length: 30 }, () => t.call('/api/v1/auth/apikeys/generate', {}, { token: u.token })));
    expect(results.filter((r) => r.status === 200)).toHaveLength(10);
    expect(results.filter((r) => r.status === 409)).toHaveLength(20);
    const rows = await t.deps.db.selectFrom('api_keys').select('id').where('user_id', '=', u.id).execute();
    expect(rows).toHaveLength(10);
  });

  it('30 invite generates at once never pass the weekly limit', async () => {
    t = await createTestApp(dialect);
    await t.call('/api/v1/admin/set/uploadlimit', { roleName: 'default', invitesAllowed: 4 }, { token: t.admin.token });
    const u = await t.createUser();
    const results = await Promise.all(Array.from({ length: 30 }, () => t.call('/api/v1/utils/invites', {}, { token: u.token })));
    expect(results.filter((r) => r.status === 200)).toHaveLength(4);
    expect(results.filter((r) => r.status === 403)).toHaveLength(26);
    const rows = await t.deps.db.selectFrom('invites').select('id').where('created_by', '=', u.id).execute();
    expect(rows).toHaveLength(4);
  });
});
