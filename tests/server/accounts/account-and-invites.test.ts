import { afterEach, describe, expect, it } from 'vitest';
import { weekStart } from '../../../server/modules/invites/invites.service.ts';
import { newId, nowSeconds } from '../../../server/lib/ids.ts';
import { DIALECTS, createTestApp, type TestApp, type TestUser } from '../../helpers/test-app.ts';

interface InviteOut {
  _id: string;
  inviteKey: string;
  createdBy: string | null;
  claimed: boolean;
  claimedBy: string | null;
  createdAt: number;
}

describe('weekStart', () => {
  it('is Monday 00:00 UTC of the same week', () => {
    // Wednesday 2026-11-18 15:30 UTC → Monday 2026-11-16 00:00 UTC.
    expect(weekStart(Date.UTC(2026, 10, 18, 15, 30) / 1000)).toBe(Date.UTC(2026, 10, 16) / 1000);
    // Sunday 23:59 still belongs to the week that began six days before.
    expect(weekStart(Date.UTC(2026, 10, 22, 23, 59) / 1000)).toBe(Date.UTC(2026, 10, 16) / 1000);
    expect(weekStart(Date.UTC(2026, 10, 23, 0, 0) / 1000)).toBe(Date.UTC(2026, 10, 23) / 1000);
  });
});

describe.each(DIALECTS)('own account on %s', (dialect) => {
  let t: TestApp;
  afterEach(async () => t?.close());

  it('utils/settings shows the site settings to any signed-in user', async () => {
    t = await createTestApp(dialect);
    const u = await t.createUser();
    await t.call('/api/v1/admin/set/maxfilesize', { value: 2048 }, { token: t.admin.token });
    const res = await t.call('/api/v1/utils/settings', {}, { token: u.token });
    expect(res.body).toEqual({ success: true, settings: { allow_uploading: true, maintenance_mode: false, max_file_size: 2048 } });
    expect((await t.call('/api/v1/utils/settings', {})).status).toBe(401);
  });

  it('changeuser renames the caller, allows a change of case, and refuses a taken name with 409', async () => {
    t = await createTestApp(dialect);
    const u = await t.createUser({ username: 'olivia' });
    const res = await t.call('/api/v1/utils/changeuser', { newUsername: 'Olivia' }, { token: u.token });
    expect(res.body).toEqual({ success: true, message: 'Username updated successfully.' });
    expect((await t.call('/api/v1/auth/data', {}, { token: u.token })).body).toMatchObject({ user: { username: 'Olivia' } });
    const taken = await t.call('/api/v1/utils/changeuser', { newUsername: 'Admin' }, { token: u.token });
    expect(taken.status).toBe(409);
    expect(taken.body).toEqual({ success: false, error: 'That username is already taken.' });
    const bad = await t.call<{ error: string }>('/api/v1/utils/changeuser', { newUsername: 'no spaces!' }, { token: u.token });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toBe("Field 'newUsername' has characters that are not allowed.");
  });

  it('changepassword needs the current password and ends the other sessions only', async () => {
    t = await createTestApp(dialect);
    const u = await t.createUser();
    const elsewhere = (await t.call<{ token: string }>('/api/v1/auth/login', { username: u.username, password: u.password })).body.token;
    const wrong = await t.call('/api/v1/utils/changepassword', { currentPassword: 'not-it', newPassword: 'brand-new-pass' }, { token: u.token });
    expect(wrong.status).toBe(400);
    expect(wrong.body).toEqual({ success: false, error: 'Your current password is incorrect.' });
    expect((await t.call('/api/v1/auth/data', {}, { token: elsewhere })).status).toBe(200);

    const ok = await t.call('/api/v1/utils/changepassword', { currentPassword: u.password, newPassword: 'brand-new-pass' }, { token: u.token });
    expect(ok.body).toEqual({ success: true, message: 'Password updated successfully.' });
    expect((await t.call('/api/v1/auth/data', {}, { token: u.token })).status).toBe(200);
    expect((await t.call('/api/v1/auth/data', {}, { token: elsewhere })).status).toBe(401);
    expect((await t.call('/api/v1/auth/login', { username: u.username, password: u.password })).status).toBe(401);
    expect((await t.call('/api/v1/auth/login', { username: u.username, password: 'brand-new-pass' })).status).toBe(200);
  });
});

describe.each(DIALECTS)('own invites on %s', (dialect) => {
  let t: TestApp;
  afterEach(async () => t?.close());

  async function setLimit(role: string, invitesAllowed: number) {
    const res = await t.call('/api/v1/admin/set/uploadlimit', { roleName: role, invitesAllowed }, { token: t.admin.token });
    expect(res.status).toBe(200);
  }
  const generate = (u: TestUser) => t.call<{ success: boolean; message: string; inviteKey: string; error?: string }>('/api/v1/utils/invites', {}, { token: u.token });

  it('reports the weekly allowance and when it resets', async () => {
    t = await createTestApp(dialect);
    await setLimit('trusted', 3);
    const u = await t.createUser({ role: 'trusted' });
    const res = await t.call('/api/v1/utils/invites/invite-limit', {}, { token: u.token });
    expect(res.body).toEqual({ success: true, remainingInvites: 3, invitesAllowed: 3, resetsAt: weekStart(nowSeconds()) + 7 * 86_400 });
  });

  it('generates keys up to the allowance, counting deleted ones, then refuses with the spec’s message', async () => {
    t = await createTestApp(dialect);
    await setLimit('default', 2);
    const u = await t.createUser();
    // A key from last week does not count.
    await t.deps.db
      .insertInto('invites')
      .values({ id: newId(), invite_key: 'last-week', created_by: u.id, claimed: 0, claimed_by: null, created_at: weekStart(nowSeconds()) - 1, claimed_at: null, deleted_at: null })
      .execute();
    const first = await generate(u);
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ success: true, message: 'Invite key generated.' });
    expect(first.body.inviteKey).toMatch(/^[A-Za-z0-9_-]{20}$/);
    const listed = await t.call<{ invites: InviteOut[] }>('/api/v1/manage/invites', {}, { token: u.token });
    const firstId = listed.body.invites.find((i) => i.inviteKey === first.body.inviteKey)!._id;
    expect((await t.call('/api/v1/manage/inviteremoval', { inviteKeyId: firstId }, { token: u.token })).status).toBe(200);

    expect((await generate(u)).status).toBe(200);
    const over = await generate(u);
    expect(over.status).toBe(403);
    expect(over.body).toEqual({ success: false, error: 'You may only generate 2 invite keys this week.' });
    expect((await t.call('/api/v1/utils/invites/invite-limit', {}, { token: u.token })).body).toMatchObject({ remainingInvites: 0, invitesAllowed: 2 });
  });

  it('tells a role allowed no invites that it has reached its limit', async () => {
    t = await createTestApp(dialect);
    await setLimit('default', 0);
    const u = await t.createUser();
    const res = await generate(u);
    expect(res.status).toBe(403);
    expect(res.body).toEqual({ success: false, error: 'You have reached your weekly invite limit.' });
  });

  it('does not hand out more keys than allowed to concurrent requests', async () => {
    t = await createTestApp(dialect);
    await setLimit('default', 3);
    const u = await t.createUser();
    const results = await Promise.all(Array.from({ length: 8 }, () => generate(u)));
    expect(results.filter((r) => r.status === 200)).toHaveLength(3);
    expect(results.filter((r) => r.status === 403)).toHaveLength(5);
  });

  it('lists only the caller’s invites with usernames, filters and pages them', async () => {
    t = await createTestApp(dialect);
    await setLimit('default', 20);
    const u = await t.createUser();
    const other = await t.createUser();
    const keys: string[] = [];
    for (let i = 0; i < 10; i++) keys.push((await generate(u)).body.inviteKey);
    await generate(other);
    const reg = await t.call('/api/v1/auth/register', { username: 'Claimer_One', password: 'password-1', invitekey: keys[0] });
    expect(reg.status).toBe(200);

    const page1 = await t.call<{ success: boolean; invites: InviteOut[]; totalPages: number; total: number }>('/api/v1/manage/invites', {}, { token: u.token });
    expect(page1.body.invites).toHaveLength(8);
    expect(page1.body.totalPages).toBe(2);
    expect(page1.body.total).toBe(10);
    const page2 = await t.call<{ invites: InviteOut[] }>('/api/v1/manage/invites', { page: 2, limit: 8 }, { token: u.token });
    expect(page2.body.invites).toHaveLength(2);
    const all = [...page1.body.invites, ...page2.body.invites];
    expect(new Set(all.map((i) => i.inviteKey))).toEqual(new Set(keys));
    for (const inv of all) {
      expect(typeof inv._id).toBe('string');
      expect(typeof inv.createdAt).toBe('number');
      expect(inv.createdBy).toBe(u.username);
    }

    const claimed = await t.call<{ invites: InviteOut[]; totalPages: number }>('/api/v1/manage/invites', { filters: { claimedFilter: 'claimed' } }, { token: u.token });
    expect(claimed.body.invites).toEqual([expect.objectContaining({ inviteKey: keys[0], claimed: true, claimedBy: 'Claimer_One' })]);
    const unclaimed = await t.call<{ invites: InviteOut[]; total: number }>('/api/v1/manage/invites', { filters: { claimedFilter: 'unclaimed' } }, { token: u.token });
    expect(unclaimed.body.total).toBe(9);
    expect(unclaimed.body.invites.every((i) => !i.claimed && i.claimedBy === null)).toBe(true);
    const byName = await t.call<{ invites: InviteOut[] }>('/api/v1/manage/invites', { filters: { claimedBy: 'claimer_o' } }, { token: u.token });
    expect(byName.body.invites.map((i) => i.inviteKey)).toEqual([keys[0]]);
    const none = await t.call<{ invites: InviteOut[]; totalPages: number }>('/api/v1/manage/invites', { filters: { claimedBy: 'zzz' } }, { token: u.token });
    expect(none.body).toMatchObject({ invites: [], totalPages: 0 });
  });

  it('removes only the caller’s own invite, and a removed key cannot be claimed', async () => {
    t = await createTestApp(dialect);
    await setLimit('default', 5);
    const u = await t.createUser();
    const other = await t.createUser();
    const key = (await generate(u)).body.inviteKey;
    const id = (await t.call<{ invites: InviteOut[] }>('/api/v1/manage/invites', {}, { token: u.token })).body.invites[0]!._id;
    const foreign = await t.call('/api/v1/manage/inviteremoval', { inviteKeyId: id }, { token: other.token });
    expect(foreign.status).toBe(404);
    expect(foreign.body).toEqual({ success: false, error: 'Invite not found.' });
    expect((await t.call('/api/v1/manage/inviteremoval', { inviteKeyId: id }, { token: u.token })).body).toMatchObject({ success: true });
    expect((await t.call('/api/v1/manage/inviteremoval', { inviteKeyId: id }, { token: u.token })).status).toBe(404);
    expect((await t.call<{ invites: InviteOut[] }>('/api/v1/manage/invites', {}, { token: u.token })).body.invites).toEqual([]);
    expect((await t.call('/api/v1/auth/register', { username: 'latecomer', password: 'password-1', invitekey: key })).status).toBe(400);
  });
});
