import { afterEach, describe, expect, it } from 'vitest';
import { DIALECTS } from '../../helpers/test-app.ts';
import { createHttpTestApp, type HttpTestApp } from '../../helpers/upload.ts';
import { pageIdsQuery } from '../../../server/modules/files/files.repository.ts';
import { orderOf, STRIDE } from '../../../server/modules/files/list-anchors.ts';
import type { FilesTable } from '../../../server/db/schema.ts';

interface ListBody {
  files: { actual_name: string }[];
  totalImages: number;
}

const SORTS = ['newest', 'oldest', 'largest', 'smallest'] as const;

/**
 * Issue 9: deep pages seek from a kept anchor (every STRIDE-th row) instead of stepping over
 * the whole offset. Whatever the list went through between two requests, a page must be the one
 * the plain offset query gives at that moment.
 */
describe.each(DIALECTS)('deep list pages from anchors on %s (issue 9)', (dialect) => {
  let t: HttpTestApp;
  afterEach(async () => t?.close());

  let serial = 0;
  /** Rows straight into the table (the triggers still run): thousands of uploads would take minutes. */
  async function insert(userId: string, count: number, at: (i: number) => { size: number; time: number }) {
    const rows: FilesTable[] = [];
    for (let i = 0; i < count; i++) {
      const n = serial++;
      const { size, time } = at(i);
      const name = `a${String(n).padStart(9, '0')}`;
      rows.push({ id: `f${String((n * 7919) % 100_003).padStart(6, '0')}x${n}`, actual_name: `${name}.bin`, original_name: `${name}.bin`, user_id: userId,
        size, mime_type: 'application/octet-stream', width: null, height: null, time_created: time, storage_key: `anchor${name}`, sha256: null, previews: '[]' });
    }
    for (let i = 0; i < rows.length; i += 500) await t.deps.db.insertInto('files').values(rows.slice(i, i + 500)).execute();
  }

  /** The page the plain offset query gives, by actual name. */
  async function offsetPage(userId: string | undefined, sort: (typeof SORTS)[number], page: number, pageSize: number) {
    let q = t.deps.db.selectFrom('files').select('actual_name').where('id', 'in', pageIdsQuery(t.deps.db, { userId, sort, page, pageSize }));
    for (const [column, direction] of orderOf(sort)) q = q.orderBy(column, direction);
    return (await q.execute()).map((r) => r.actual_name);
  }

  async function expectPagesAsOffset(token: string, userId: string | undefined, pages: [number, number][]) {
    const path = userId ? '/api/v1/files/uploaded' : '/api/v1/admin/get/uploaded';
    for (const sort of SORTS) {
      for (const [page, pageSize] of pages) {
        const res = await t.call<ListBody>(path, { sort, page, pageSize }, { token });
        expect(res.status).toBe(200);
        expect(res.body.files.map((f) => f.actual_name), `${userId ? 'own' : 'admin'} ${sort} page ${page} × ${pageSize}`).toEqual(
          await offsetPage(userId, sort, page, pageSize),
        );
      }
    }
  }

  it('answers every sort exactly as the offset query, after inserts, deletes and re-keyed files between requests', async () => {
    t = await createHttpTestApp(dialect);
    const user = await t.createUser();
    const other = await t.createUser();
    // Ties everywhere (7 sizes, 40 times), so the id breaks most of them, anchors included.
    await insert(user.id, 2 * STRIDE + 600, (i) => ({ size: 10 + (i % 7), time: 1_700_000_000 + (i % 40) }));
    await insert(other.id, 300, (i) => ({ size: 10 + (i % 5), time: 1_700_000_000 + (i % 40) }));
    // Around each anchor (rows STRIDE − 1 and 2·STRIDE − 1), the last page, a big page.
    const pages: [number, number][] = [[166, 6], [167, 6], [168, 6], [333, 6], [334, 6], [335, 6], [434, 6], [20, 100], [21, 100]];
    const check = async () => {
      await expectPagesAsOffset(user.token, user.id, pages);
      await expectPagesAsOffset(t.admin.token, undefined, [[168, 6], [334, 6], [484, 6]]);
    };
    await check();

    // New files at the head of every order: each later row moves down by as many places.
    await insert(user.id, 3, (i) => ({ size: 1_000 + i, time: 1_800_000_000 + i }));
    await insert(user.id, 2, (i) => ({ size: 1 + i, time: 1_600_000_000 + i }));
    await check();

    // Files gone from the head and the middle of the lists.
    const head = await t.deps.db.selectFrom('files').select('id').where('user_id', '=', user.id).orderBy('time_created', 'desc').orderBy('id', 'desc').limit(4).execute();
    const middle = await t.deps.db.selectFrom('files').select('id').where('user_id', '=', user.id).orderBy('size').orderBy('id').offset(STRIDE + 10).limit(3).execute();
    await t.deps.db.deleteFrom('files').where('id', 'in', [...head, ...middle].map((r) => r.id)).execute();
    await check();

    // A file whose size and time change moves within the orders without any count changing.
    const moved = await t.deps.db.selectFrom('files').select('id').where('user_id', '=', user.id).orderBy('size', 'desc').orderBy('id').offset(5).limit(1).executeTakeFirstOrThrow();
    await t.deps.db.updateTable('files').set({ size: 0, time_created: 1_500_000_000 }).where('id', '=', moved.id).execute();
    await check();
  });
});
