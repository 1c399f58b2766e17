import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { DIALECTS, type TestUser } from '../../helpers/test-app.ts';
import { createHttpTestApp, randomBytes, sendMultipart, type HttpTestApp } from '../../helpers/upload.ts';

interface ListBody {
  success: boolean;
  files: { actual_name: string; original_name: string; size: number; username: string; url: string }[];
  totalImages: number;
}

describe.each(DIALECTS)('file lists, deletes and statistics on %s (spec §7)', (dialect) => {
  let t: HttpTestApp;
  afterEach(async () => t?.close());

  async function put(user: TestUser, data: Buffer, name: string) {
    const res = await sendMultipart(`${t.apiUrl}/api/v1/files/upload`, { fields: { token: user.token, originalname: name }, file: { data } });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body.file as { actual_name: string; url: string };
  }

  // Stored objects' keys (local disk, or S3 under TEST_STORAGE=s3).
  const storedObjects = () => t.store.storedKeys();

  it('lists own files with pagination (6 by default), name filter and the four sorts', async () => {
    t = await createHttpTestApp(dialect);
    const user = await t.createUser();
    const other = await t.createUser();
    for (let i = 1; i <= 8; i++) await put(user, randomBytes(i * 100), i % 2 ? `Holiday-${i}.bin` : `work-${i}.bin`);
    await put(other, randomBytes(10), 'holiday-other.bin');

    const first = await t.call<ListBody>('/api/v1/files/uploaded', {}, { token: user.token });
    expect(first.status).toBe(200);
    expect(first.body.files).toHaveLength(6);
    expect(first.body.totalImages).toBe(8);
    const second = await t.call<ListBody>('/api/v1/files/uploaded', { page: 2 }, { token: user.token });
    expect(second.body.files).toHaveLength(2);
    expect(new Set([...first.body.files, ...second.body.files].map((f) => f.actual_name)).size).toBe(8);

    const filtered = await t.call<ListBody>('/api/v1/files/uploaded', { filters: { name: 'HOLIDAY' }, pageSize: 100 }, { token: user.token });
    expect(filtered.body.totalImages).toBe(4);
    expect(filtered.body.files.every((f) => f.original_name.startsWith('Holiday'))).toBe(true);

    const largest = await t.call<ListBody>('/api/v1/files/uploaded', { sort: 'largest', pageSize: 3 }, { token: user.token });
    expect(largest.body.files.map((f) => f.size)).toEqual([800, 700, 600]);
    const smallest = await t.call<ListBody>('/api/v1/files/uploaded', { sort: 'smallest', pageSize: 2 }, { token: user.token });
    expect(smallest.body.files.map((f) => f.size)).toEqual([100, 200]);

    // newest/oldest follow time_created; make the times differ so the order is observable.
    const rows = await t.deps.db.selectFrom('files').select(['id', 'size']).where('user_id', '=', user.id).execute();
    for (const r of rows) await t.deps.db.updateTable('files').set({ time_created: 1_700_000_000 + Number(r.size) }).where('id', '=', r.id).execute();
    const newest = await t.call<ListBody>('/api/v1/files/uploaded', { sort: 'newest', pageSize: 2 }, { token: user.token });
    expect(newest.body.files.map((f) => f.size)).toEqual([800, 700]);
    const oldest = await t.call<ListBody>('/api/v1/files/uploaded', { sort: 'oldest', pageSize: 2 }, { token: user.token });
    expect(oldest.body.files.map((f) => f.size)).toEqual([100, 200]);

    const bad = await t.call('/api/v1/files/uploaded', { sort: 'random' }, { token: user.token });
    expect(bad.status).toBe(400);
    expect((await t.call('/api/v1/files/uploaded', { pageSize: 101 }, { token: user.token })).status).toBe(400);
  });

  it('lists the files of one second in the order they were uploaded (newest first, or oldest first)', async () => {
    t = await createHttpTestApp(dialect);
    const user = await t.createUser();
    const names = Array.from({ length: 8 }, (_, i) => `photo-${i}.bin`);
    for (const name of names) await put(user, randomBytes(64), name);
    // A multi-file upload finishes within a second: time_created, in seconds, ties.
    await t.deps.db.updateTable('files').set({ time_created: 1_700_000_000 }).where('user_id', '=', user.id).execute();

    const list = async (sort: string, page: number) =>
      (await t.call<ListBody>('/api/v1/files/uploaded', { sort, page, pageSize: 3 }, { token: user.token })).body.files.map((f) => f.original_name);
    const walk = async (sort: string) => [...(await list(sort, 1)), ...(await list(sort, 2)), ...(await list(sort, 3))];
    expect(await walk('newest')).toEqual([...names].reverse());
    expect(await walk('oldest')).toEqual(names);
  });

  it('deletes only the owner\'s file by its last path segment, never a path; staff may delete any file', async () => {
    t = await createHttpTestApp(dialect);
    const owner = await t.createUser();
    const other = await t.createUser();
    const mod = await t.createUser({ role: 'mod' });
    const a = await put(owner, randomBytes(100), 'a.bin');
    const b = await put(owner, randomBytes(100), 'b.bin');
    expect(await storedObjects()).toHaveLength(2);

    for (const filePath of ['../../stash.db', '../../x', `../${a.actual_name}/..`, 'storage/files', '%2e%2e%2fstash.db']) {
      const res = await t.call('/api/v1/files/delete', { filePath }, { token: owner.token });
      expect(res.status, filePath).toBe(404);
    }
    const byStranger = await t.call('/api/v1/files/delete', { filePath: a.url }, { token: other.token });
    expect(byStranger.status).toBe(404);
    expect(await storedObjects()).toHaveLength(2);
    if (dialect === 'sqlite') expect(fs.existsSync(path.join(t.dataDir, 'stash.db'))).toBe(true);

    const byOwner = await t.call('/api/v1/files/delete', { filePath: `https://anything.example/some/dir/${a.actual_name}?x=1` }, { token: owner.token });
    expect(byOwner.status).toBe(200);
    expect(byOwner.body).toMatchObject({ success: true });
    expect(await storedObjects()).toHaveLength(1);
    const gone = await fetch(`${t.filesUrl}/${a.actual_name}`);
    expect(gone.status).toBe(404);
    await gone.arrayBuffer();

    const byMod = await t.call('/api/v1/admin/update/delete', { filePath: b.actual_name }, { token: mod.token });
    expect(byMod.status).toBe(200);
    expect(await storedObjects()).toHaveLength(0);
  });

  it('lets mod and admin list every file with filters, and answers default and trusted users with 403', async () => {
    t = await createHttpTestApp(dialect);
    const alice = await t.createUser({ username: 'alice_files' });
    const bob = await t.createUser({ username: 'bob_files' });
    const mod = await t.createUser({ role: 'mod' });
    const trusted = await t.createUser({ role: 'trusted' });
    const a = await put(alice, randomBytes(50), 'Report.bin');
    await put(bob, randomBytes(60), 'photo.bin');
    await put(bob, randomBytes(70), 'report-final.bin');

    const all = await t.call<ListBody>('/api/v1/admin/get/uploaded', {}, { token: mod.token });
    expect(all.status).toBe(200);
    expect(all.body.totalImages).toBe(3);
    const byUser = await t.call<ListBody>('/api/v1/admin/get/uploaded', { filters: { username: 'BOB' } }, { token: t.admin.token });
    expect(byUser.body.files.map((f) => f.username)).toEqual(['bob_files', 'bob_files']);
    const byName = await t.call<ListBody>('/api/v1/admin/get/uploaded', { filters: { originalName: 'report', username: '' } }, { token: mod.token });
    expect(byName.body.totalImages).toBe(2);
    const byActual = await t.call<ListBody>('/api/v1/admin/get/uploaded', { filters: { actualName: a.actual_name.slice(0, 10) } }, { token: mod.token });
    expect(byActual.body.files.map((f) => f.actual_name)).toEqual([a.actual_name]);

    for (const user of [alice, trusted]) {
      const res = await t.call('/api/v1/admin/get/uploaded', {}, { token: user.token });
      expect(res.status).toBe(403);
      expect(res.body).toEqual({ success: false, error: 'You are not authorized to access this resource.' });
      expect((await t.call('/api/v1/admin/update/delete', { filePath: a.actual_name }, { token: user.token })).status).toBe(403);
      expect((await t.call('/api/v1/admin/get/allstats', {}, { token: user.token })).status).toBe(403);
    }
    // Spec §6 first reading: a mod lists and deletes files but sees no site statistics.
    expect((await t.call('/api/v1/admin/get/allstats', {}, { token: mod.token })).status).toBe(403);
    expect((await t.call('/api/v1/admin/get/uploaded', {})).status).toBe(401);
  });

  it('reports the max file size in MB, user stats and site stats by kind', async () => {
    t = await createHttpTestApp(dialect);
    const user = await t.createUser();
    const other = await t.createUser();
    const gif = fs.readFileSync(path.join(import.meta.dirname, 'fixtures', '300x200.gif'));
    await put(user, gif, 'a.gif');
    await put(user, randomBytes(1000), 'b.bin');
    await put(other, Buffer.from('some text'), 'c.txt');

    const size = await t.call('/api/v1/utils/filesize', {}, { token: user.token });
    expect(size.body).toEqual({ success: true, maxFileSize: 1024 });
    await t.deps.settings.set('max_file_size', 5);
    expect((await t.call('/api/v1/utils/filesize', {}, { token: user.token })).body).toEqual({ success: true, maxFileSize: 5 });

    const mine = await t.call('/api/v1/utils/userstats', {}, { token: user.token });
    expect(mine.body).toEqual({ success: true, stats: { totalFilesUploaded: 2, totalStorageUsed: gif.length + 1000 } });
    const fresh = await t.createUser();
    expect((await t.call('/api/v1/utils/userstats', {}, { token: fresh.token })).body).toEqual({ success: true, stats: { totalFilesUploaded: 0, totalStorageUsed: 0 } });

    const site = await t.call('/api/v1/admin/get/allstats', {}, { token: t.admin.token });
    expect(site.status).toBe(200);
    expect(site.body).toEqual({
      success: true,
      stats: {
        totalFilesUploaded: 3,
        totalStorageUsed: gif.length + 1000 + 9,
        // admin + user + other + fresh
        totalUsers: 4,
        photos: { count: 1, size: gif.length },
        videos: { count: 0, size: 0 },
        others: { count: 2, size: 1009 },
      },
    });
  });
});
