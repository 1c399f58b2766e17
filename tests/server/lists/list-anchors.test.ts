import { afterEach, describe, expect, it } from 'vitest';
import { DIALECTS } from '../../helpers/test-app.ts';
import { createHttpTestApp, type HttpTestApp } from '../../helpers/upload.ts';
import { sql } from 'kysely';
import { listFiles, preloadListAnchors } from '../../../server/modules/files/files.repository.ts';
import { pageIdsQuery } from '../../../server/modules/files/list-reads.ts';
import { openDatabase, type Database } from '../../../server/db/index.ts';
import { anchorWalks, KEEP_EVERY, orderOf, STRIDE } from '../../../server/modules/files/list-anchors.ts';
import { LOG_KEPT } from '../../../server/db/migrations/2026-11-29-10-file-list-log.ts';
import { newId } from '../../../server/lib/ids.ts';
import { until } from '../../helpers/poll.ts';
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
  /**
   * Rows straight into the table (the triggers still run): thousands of uploads would take
   * minutes. Ids as the server makes them unless `oddIds`: ids the anchors cannot order
   * themselves when sort keys tie.
   */
  async function insert(userId: string, count: number, at: (i: number) => { size: number; time: number }, oddIds = true) {
    const rows: FilesTable[] = [];
    for (let i = 0; i < count; i++) {
      const n = serial++;
      const { size, time } = at(i);
      const name = `a${String(n).padStart(9, '0')}`;
      rows.push({ id: oddIds ? `f${String((n * 7919) % 100_003).padStart(6, '0')}x${n}` : newId(), actual_name: `${name}.bin`, original_name: `${name}.bin`, user_id: userId,
        size, mime_type: 'application/octet-stream', width: null, height: null, time_created: time, storage_key: `anchor${name}`, sha256: null, previews: '[]' });
    }
    for (let i = 0; i < rows.length; i += 500) await t.deps.db.insertInto('files').values(rows.slice(i, i + 500)).execute();
  }

  /**
   * Waits until `count` lists have anchors kept at their current counter (own lists: the
   * owner's; all files: the site's). A walk runs beside the requests — none waits for it — and
   * keeps its anchors when it ends, so this is the wait for walks to end.
   */
  async function walksEnded(count: number) {
    const current = async () => {
      const kept = await t.deps.db.selectFrom('file_list_anchors').select(['list', 'user_id', 'changes']).execute();
      const owners = await t.deps.db.selectFrom('file_counts').select(['user_id', 'changes']).execute();
      const site = Number((await t.deps.db.selectFrom('file_totals').select('changes').executeTakeFirstOrThrow()).changes);
      return kept.filter((k) => Number(k.changes) === (k.user_id === null ? site : Number(owners.find((o) => o.user_id === k.user_id)?.changes))).length;
    };
    expect(await until(current, (n) => n >= count), 'lists whose walk ended').toBe(count);
  }

  /** A new app and a user whose 2,600 files had their four lists walked and kept, page 334 asked of each. */
  async function walkedList() {
    t = await createHttpTestApp(dialect);
    const user = await t.createUser();
    await insert(user.id, 2 * STRIDE + 600, (i) => ({ size: 10 + (i % 7), time: 1_700_000_000 + (i % 40) }), false);
    await expectPagesAsOffset(user.token, user.id, [[334, 6]]);
    await walksEnded(4);
    return user;
  }

  /** A second handle on this test's database, with list anchors of its own, as another server process has. */
  async function otherProcess() {
    const schema = dialect === 'postgres' ? (await sql<{ s: string }>`select current_schema() as s`.execute(t.deps.db)).rows[0]!.s : undefined;
    return openDatabase(t.deps.config.databaseUrl, schema ? { searchPath: schema } : {});
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

  it('carries its anchors across uploads and deletes instead of walking the list again, and walks when the log cannot tell', async () => {
    t = await createHttpTestApp(dialect);
    const user = await t.createUser();
    const other = await t.createUser();
    await insert(user.id, 2 * STRIDE + 600, (i) => ({ size: 10 + (i % 7), time: 1_700_000_000 + (i % 40) }), false);
    await insert(other.id, 300, (i) => ({ size: 10 + (i % 5), time: 1_700_000_000 + (i % 40) }), false);
    const pages: [number, number][] = [[166, 6], [167, 6], [168, 6], [333, 6], [334, 6], [434, 6], [21, 100]];
    const check = async () => {
      await expectPagesAsOffset(user.token, user.id, pages);
      await expectPagesAsOffset(t.admin.token, undefined, [[168, 6], [334, 6], [484, 6]]);
    };
    await check();
    // One walk per list asked for (four sorts, own and all files), and no more from here on.
    const walked = anchorWalks(t.deps.db);
    expect(walked).toBe(8);
    await walksEnded(8);
    // The rows the anchors stand on (the STRIDE-th of each order and the one after), to delete later.
    const gone: string[] = [];
    for (const sort of SORTS) {
      let q = t.deps.db.selectFrom('files').select('id').where('user_id', '=', user.id);
      for (const [column, direction] of orderOf(sort)) q = q.orderBy(column, direction);
      gone.push(...(await q.offset(STRIDE - 1).limit(2).execute()).map((r) => r.id));
    }

    // Files coming at the head and the tail of every order, and in the middle among ties.
    await insert(user.id, 3, (i) => ({ size: 1_000 + i, time: 1_800_000_000 + i }), false);
    await insert(user.id, 2, (i) => ({ size: 1 + i, time: 1_600_000_000 + i }), false);
    await insert(user.id, 4, (i) => ({ size: 13, time: 1_700_000_020 + i }), false);
    await insert(other.id, 2, (i) => ({ size: 12, time: 1_700_000_010 + i }), false);
    await check();
    // Files going, among them the anchors' own rows.
    const head = await t.deps.db.selectFrom('files').select('id').where('user_id', '=', other.id).limit(3).execute();
    await t.deps.db.deleteFrom('files').where('id', 'in', [...new Set(gone), ...head.map((r) => r.id)]).execute();
    await check();
    expect(anchorWalks(t.deps.db), 'lists walked again after uploads and deletes').toBe(walked);

    // A re-keyed file logs nothing: the lists that move are read again, and stay right.
    const moved = await t.deps.db.selectFrom('files').select('id').where('user_id', '=', user.id).orderBy('size').offset(50).limit(1).executeTakeFirstOrThrow();
    await t.deps.db.updateTable('files').set({ size: 5_000 }).where('id', '=', moved.id).execute();
    await check();
    expect(anchorWalks(t.deps.db)).toBe(walked + 8);
    await walksEnded(8);

    // A log pruned past what a process holds: walked again.
    await insert(user.id, 1, () => ({ size: 14, time: 1_700_000_030 }), false);
    await t.deps.db.deleteFrom('file_list_log').execute();
    await check();
    expect(anchorWalks(t.deps.db)).toBe(walked + 16);
    await walksEnded(8);

    // More than STRIDE changes at once: walked again rather than carried that far.
    await insert(user.id, STRIDE + 1, (i) => ({ size: 20 + (i % 3), time: 1_650_000_000 + i }), false);
    await check();
    expect(anchorWalks(t.deps.db)).toBe(walked + 24);
  });

  it('walks again when a tie only the database can order meets an anchor', async () => {
    t = await createHttpTestApp(dialect);
    const user = await t.createUser();
    // One size for all and ids the anchors do not order themselves.
    await insert(user.id, 2 * STRIDE + 10, (i) => ({ size: 10, time: 1_700_000_000 + i }));
    await expectPagesAsOffset(user.token, user.id, [[167, 6], [334, 6]]);
    await walksEnded(4);
    const walked = anchorWalks(t.deps.db);
    await insert(user.id, 1, () => ({ size: 10, time: 1_800_000_000 }));
    await expectPagesAsOffset(user.token, user.id, [[167, 6], [334, 6]]);
    // The size orders met the tie and walked; the time orders carried their anchors.
    expect(anchorWalks(t.deps.db)).toBe(walked + 2);
  });

  it('keeps only the last LOG_KEPT changes of the site in its log', async () => {
    t = await createHttpTestApp(dialect);
    const user = await t.createUser();
    await insert(user.id, LOG_KEPT + 700, (i) => ({ size: i, time: 1_700_000_000 + i }), false);
    await t.deps.db.deleteFrom('files').where('user_id', '=', user.id).where('size', '<', 300).execute();
    const log = await t.deps.db.selectFrom('file_list_log').select((eb) => [eb.fn.countAll<number>().as('n'), eb.fn.min('changes').as('first'), eb.fn.max('changes').as('last')]).executeTakeFirstOrThrow();
    const totals = await t.deps.db.selectFrom('file_totals').select('changes').executeTakeFirstOrThrow();
    expect(Number(log.n)).toBe(LOG_KEPT);
    expect(Number(log.last)).toBe(Number(totals.changes));
    expect(Number(log.first)).toBe(Number(totals.changes) - LOG_KEPT + 1);
  });

  it("starts from another process's walk instead of walking the list itself", async () => {
    t = await createHttpTestApp(dialect);
    const user = await t.createUser();
    await insert(user.id, 2 * STRIDE + 600, (i) => ({ size: 10 + (i % 7), time: 1_700_000_000 + (i % 40) }), false);
    // This app's process walks every list once; a second process on the same database follows.
    await expectPagesAsOffset(user.token, user.id, [[167, 6], [334, 6]]);
    await walksEnded(4);
    const second = await otherProcess();
    try {
      const pagesOf = async (db: Database, sort: (typeof SORTS)[number], page: number) =>
        (await listFiles(db, { userId: user.id, sort, page, pageSize: 6 })).rows.map((r) => r.actual_name);
      const expectSecondAsOffset = async () => {
        for (const sort of SORTS) {
          for (const page of [167, 168, 334, 434]) expect(await pagesOf(second.db, sort, page), `${sort} page ${page}`).toEqual(await offsetPage(user.id, sort, page, 6));
        }
      };
      await expectSecondAsOffset();
      // Uploads and deletes since: carried from the kept walk, still without a walk.
      await insert(user.id, 3, (i) => ({ size: 1_000 + i, time: 1_800_000_000 + i }), false);
      const someone = await t.deps.db.selectFrom('files').select('id').where('user_id', '=', user.id).orderBy('size').offset(1_500).limit(2).execute();
      await t.deps.db.deleteFrom('files').where('id', 'in', someone.map((r) => r.id)).execute();
      await expectSecondAsOffset();
      expect(anchorWalks(second.db), 'walks by the second process').toBe(0);

      // A kept walk the log no longer reaches (more than STRIDE changes since): walked, and kept anew.
      await insert(user.id, STRIDE + 1, (i) => ({ size: 30, time: 1_650_000_000 + i }), false);
      const third = await otherProcess();
      try {
        for (const sort of SORTS) expect(await pagesOf(third.db, sort, 334), sort).toEqual(await offsetPage(user.id, sort, 334, 6));
        expect(anchorWalks(third.db)).toBe(4);
      } finally {
        await third.close();
      }
    } finally {
      await second.close();
    }
  });

  it("takes the largest lists' kept anchors at start: a new process's first deep pages read, carry and walk nothing", async () => {
    const user = await walkedList();
    // Changes since the kept walk, for the start to carry; and a row no list of this code names.
    await insert(user.id, 3, (i) => ({ size: 1_000 + i, time: 1_800_000_000 + i }), false);
    await t.deps.db.insertInto('file_list_anchors').values({ list: 'not-a-list', user_id: null, changes: 1, anchors: '[]' }).execute();
    const second = await otherProcess();
    try {
      expect(await preloadListAnchors(second.db)).toBe(4);
      // Nothing kept to load on demand any more: only what the start took can spare a walk.
      await t.deps.db.deleteFrom('file_list_anchors').execute();
      for (const sort of SORTS) {
        for (const page of [167, 334, 434]) {
          const rows = (await listFiles(second.db, { userId: user.id, sort, page, pageSize: 6 })).rows.map((r) => r.actual_name);
          expect(rows, `${sort} page ${page}`).toEqual(await offsetPage(user.id, sort, page, 6));
        }
      }
      expect(anchorWalks(second.db), 'walks by the new process').toBe(0);
    } finally {
      await second.close();
    }
  });

  it('takes the lists with the most files first when it cannot take them all', async () => {
    const big = await walkedList();
    const small = await t.createUser();
    await insert(small.id, STRIDE + 300, (i) => ({ size: 10 + (i % 5), time: 1_700_000_000 + i }), false);
    await expectPagesAsOffset(small.token, small.id, [[200, 6]]);
    await walksEnded(8);
    const second = await otherProcess();
    try {
      expect(await preloadListAnchors(second.db, 4)).toBe(4);
      await t.deps.db.deleteFrom('file_list_anchors').execute();
      const deepPages = async (userId: string, page: number) => {
        for (const sort of SORTS) {
          const rows = (await listFiles(second.db, { userId, sort, page, pageSize: 6 })).rows.map((r) => r.actual_name);
          expect(rows, `${sort} page ${page}`).toEqual(await offsetPage(userId, sort, page, 6));
        }
      };
      await deepPages(big.id, 334);
      expect(anchorWalks(second.db), 'walks for the larger list').toBe(0);
      await deepPages(small.id, 200);
      expect(anchorWalks(second.db), 'walks for the smaller list').toBe(4);
    } finally {
      await second.close();
    }
  });

  it('walks when the kept anchors do not read as anchors', async () => {
    t = await createHttpTestApp(dialect);
    const user = await t.createUser();
    await insert(user.id, 2 * STRIDE + 10, (i) => ({ size: 10 + (i % 7), time: 1_700_000_000 + i }), false);
    await expectPagesAsOffset(user.token, user.id, [[334, 6]]);
    await walksEnded(4);
    await t.deps.db.updateTable('file_list_anchors').set({ anchors: '[[1, 2, "x"]]' }).execute();
    const second = await otherProcess();
    try {
      for (const sort of SORTS) {
        const rows = (await listFiles(second.db, { userId: user.id, sort, page: 334, pageSize: 6 })).rows.map((r) => r.actual_name);
        expect(rows, sort).toEqual(await offsetPage(user.id, sort, 334, 6));
      }
      expect(anchorWalks(second.db)).toBe(4);
    } finally {
      await second.close();
    }
  });

  it('keeps the anchors it carried for other processes every KEEP_EVERY changes', async () => {
    const user = await walkedList();
    // Carried across KEEP_EVERY changes, and kept at the new counter.
    await insert(user.id, KEEP_EVERY, (i) => ({ size: 2_000 + i, time: 1_800_000_000 + i }), false);
    await expectPagesAsOffset(user.token, user.id, [[334, 6]]);
    await walksEnded(4);
    expect(anchorWalks(t.deps.db)).toBe(4);
    // More than STRIDE changes since the walk, fewer since the carried anchors were kept: a
    // second process carries those, with no walk.
    await insert(user.id, STRIDE - KEEP_EVERY + 100, (i) => ({ size: 3_000 + i, time: 1_600_000_000 + i }), false);
    const second = await otherProcess();
    try {
      for (const sort of SORTS) {
        const rows = (await listFiles(second.db, { userId: user.id, sort, page: 334, pageSize: 6 })).rows.map((r) => r.actual_name);
        expect(rows, sort).toEqual(await offsetPage(user.id, sort, 334, 6));
      }
      expect(anchorWalks(second.db), 'walks by the second process').toBe(0);
    } finally {
      await second.close();
    }
  });
});
