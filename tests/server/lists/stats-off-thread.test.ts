import { afterEach, describe, expect, it } from 'vitest';
import { createHttpTestApp, type HttpTestApp } from '../../helpers/upload.ts';
import { OFF_THREAD_ROWS, offThreadReads } from '../../../server/db/sqlite-off-thread.ts';
import type { FilesTable } from '../../../server/db/schema.ts';

interface Stats {
  totalFilesUploaded: number;
  totalStorageUsed: number;
  photos?: { count: number; size: number };
  videos?: { count: number; size: number };
}

/**
 * Issue 9: a large account's stats and the site's read every file; on SQLite they are read on a
 * thread of their own (server/db/sqlite-off-thread.ts), with the answers the main connection gave.
 */
describe('stats of a large account on SQLite (issue 9)', () => {
  let t: HttpTestApp;
  afterEach(async () => t?.close());

  it('reads a large account\'s and the site\'s totals off the event loop, with the same answers', async () => {
    t = await createHttpTestApp('sqlite');
    const user = await t.createUser();
    const small = await t.createUser();
    const rows: FilesTable[] = [];
    const kinds = ['image/png', 'video/mp4', 'application/pdf'];
    for (let i = 0; i < OFF_THREAD_ROWS + 300; i++) {
      rows.push({ id: `s${String(i).padStart(6, '0')}`, actual_name: `st${String(i).padStart(7, '0')}.bin`, original_name: `f${i}`, user_id: i < 3 ? small.id : user.id,
        size: 100 + (i % 17), mime_type: kinds[i % 3]!, width: null, height: null, time_created: 1_700_000_000 + i, storage_key: `st${i}`, sha256: null, previews: '[]' });
    }
    for (let i = 0; i < rows.length; i += 500) await t.deps.db.insertInto('files').values(rows.slice(i, i + 500)).execute();
    const sum = (list: FilesTable[]) => ({ count: list.length, size: list.reduce((s, r) => s + r.size, 0) });
    const mine = sum(rows.filter((r) => r.user_id === user.id));

    const before = offThreadReads();
    const own = await t.call<{ stats: Stats }>('/api/v1/utils/userstats', {}, { token: user.token });
    expect(own.body.stats).toEqual({ totalFilesUploaded: mine.count, totalStorageUsed: mine.size });
    expect(offThreadReads()).toBe(before + 1);
    // A small account's stay on the main connection.
    const theirs = await t.call<{ stats: Stats }>('/api/v1/utils/userstats', {}, { token: small.token });
    expect(theirs.body.stats).toEqual({ totalFilesUploaded: 3, totalStorageUsed: sum(rows.slice(0, 3)).size });
    expect(offThreadReads()).toBe(before + 1);

    const site = await t.call<{ stats: Stats }>('/api/v1/admin/get/allstats', {}, { token: t.admin.token });
    expect(site.body.stats).toMatchObject({
      totalFilesUploaded: rows.length,
      totalStorageUsed: sum(rows).size,
      photos: sum(rows.filter((r) => r.mime_type.startsWith('image/'))),
      videos: sum(rows.filter((r) => r.mime_type.startsWith('video/'))),
    });
    expect(offThreadReads()).toBe(before + 2);
  });
});
