import { afterEach, describe, expect, it } from 'vitest';
import { DIALECTS, type TestUser } from '../../helpers/test-app.ts';
import { createHttpTestApp, randomBytes, sendMultipart, type HttpTestApp } from '../../helpers/upload.ts';
import { KEPT_COUNTS, MAX_CARRIED, countKey, keepCount, knownCount } from '../../../server/modules/files/name-counts.ts';
import { listFiles } from '../../../server/modules/files/files.repository.ts';
import { walkedPageIds } from '../../../server/modules/files/list-by-name.ts';
import { loadCount, saveCount, SHARED_FROM } from '../../../server/modules/files/name-counts-store.ts';
import { openDatabase } from '../../../server/db/index.ts';
import { until } from '../../helpers/poll.ts';
import { sql } from 'kysely';
import type { Database } from '../../../server/db/index.ts';
import type { FilesTable } from '../../../server/db/schema.ts';
import { queryPlan } from '../../helpers/query-plan.ts';
import { OFF_THREAD_ROWS, offThreadReads } from '../../../server/db/sqlite-off-thread.ts';

interface ListBody {
  files: { actual_name: string; original_name: string }[];
  totalImages: number;
}

/**
 * Issue 9: a name filter's total is counted once per state of its list (name-counts.ts). The
 * count kept must follow every upload and delete of the list, never another list's, and never
 * a username filter's (a rename moves files between its lists without changing any file).
 */
describe.each(DIALECTS)('name filter counts kept per list on %s (issue 9)', (dialect) => {
  let t: HttpTestApp;
  afterEach(async () => t?.close());

  async function put(user: TestUser, name: string) {
    const res = await sendMultipart(`${t.apiUrl}/api/v1/files/upload`, { fields: { token: user.token, originalname: name }, file: { data: randomBytes(10) } });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return (res.body.file as { actual_name: string }).actual_name;
  }
  const own = async (user: TestUser, name: string, page = 1) =>
    (await t.call<ListBody>('/api/v1/files/uploaded', { filters: { name }, page, pageSize: 2 }, { token: user.token })).body;
  const admin = async (filters: Record<string, string>) =>
    (await t.call<ListBody>('/api/v1/admin/get/uploaded', { filters, pageSize: 100 }, { token: t.admin.token })).body;
  /** Another process on the same database: its own connections, nothing kept in memory. */
  async function otherProcess() {
    const schema = dialect === 'postgres' ? (await sql<{ s: string }>`select current_schema() as s`.execute(t.deps.db)).rows[0]!.s : undefined;
    return openDatabase(t.deps.config.databaseUrl, schema ? { searchPath: schema } : {});
  }

  it('follows every upload and delete of the list, whatever the needle', async () => {
    t = await createHttpTestApp(dialect);
    const alice = await t.createUser({ username: 'alice_nc' });
    const bob = await t.createUser({ username: 'bob_nc' });
    const first = await put(alice, 'holiday-1.png');
    await put(alice, 'holiday-2.png');
    await put(alice, 'notes.txt');
    await put(bob, 'holiday-bob.png');
    // A trigram needle, one too short for trigrams, and the all-files list.
    expect([(await own(alice, 'png')).totalImages, (await own(alice, 'pn')).totalImages, (await admin({ originalName: 'png' })).totalImages]).toEqual([2, 2, 3]);

    await put(alice, 'holiday-3.png');
    expect([(await own(alice, 'png')).totalImages, (await own(alice, 'pn')).totalImages, (await admin({ originalName: 'png' })).totalImages]).toEqual([3, 3, 4]);
    // Paging keeps the total; the last page holds what is left.
    const pages = [await own(alice, 'png', 1), await own(alice, 'png', 2), await own(alice, 'png', 3)];
    expect(pages.map((p) => [p.totalImages, p.files.length])).toEqual([[3, 2], [3, 1], [3, 0]]);
    expect(pages.flatMap((p) => p.files.map((f) => f.original_name)).sort()).toEqual(['holiday-1.png', 'holiday-2.png', 'holiday-3.png']);

    expect((await t.call('/api/v1/files/delete', { filePath: first }, { token: alice.token })).status).toBe(200);
    expect([(await own(alice, 'png')).totalImages, (await own(alice, 'pn')).totalImages, (await admin({ originalName: 'png' })).totalImages]).toEqual([2, 2, 3]);

    // Another user's upload changes the all-files list, not alice's.
    await put(bob, 'beach.png');
    expect([(await own(alice, 'png')).totalImages, (await own(bob, 'png')).totalImages, (await admin({ originalName: 'png' })).totalImages]).toEqual([2, 2, 4]);

    // A user removed with their files takes them out of the all-files count.
    expect((await t.call('/api/v1/admin/set/remove', { userId: bob.id }, { token: t.admin.token })).status).toBe(200);
    expect((await admin({ originalName: 'png' })).totalImages).toBe(2);
  });

  it('counts a username filter every time: a rename changes its files without changing a file', async () => {
    t = await createHttpTestApp(dialect);
    const bob = await t.createUser({ username: 'bob_rename' });
    await put(bob, 'a.png');
    await put(bob, 'b.png');
    expect(await admin({ username: 'zed_', originalName: 'png' })).toMatchObject({ totalImages: 0, files: [] });
    const renamed = await t.call('/api/v1/admin/update/username', { targetUserId: bob.id, newUsername: 'zed_renamed' }, { token: t.admin.token });
    expect(renamed.status, JSON.stringify(renamed.body)).toBe(200);
    expect((await admin({ username: 'zed_', originalName: 'png' })).totalImages).toBe(2);
  });

  it('answers a filter asked again from the count it kept, while its list is unchanged', async () => {
    t = await createHttpTestApp(dialect);
    const alice = await t.createUser();
    await put(alice, 'one.png');
    await put(alice, 'two.png');
    expect((await own(alice, 'png')).totalImages).toBe(2);
    // No route renames a file, so nothing bumps the list's counter for this; a fresh count would
    // say 1, the kept one still says 2 — and a needle never asked is counted.
    await t.deps.db.updateTable('files').set({ original_name: 'one.txt' }).where('original_name', '=', 'one.png').execute();
    expect((await own(alice, 'png')).totalImages).toBe(2);
    expect((await own(alice, '.png')).totalImages).toBe(1);
    // A needle differing only in case is the same filter.
    expect((await own(alice, 'PNG')).totalImages).toBe(2);
  });

  it('carries a kept count across uploads and deletes by the matches among them, and counts afresh when the log cannot tell', async () => {
    t = await createHttpTestApp(dialect);
    const alice = await t.createUser();
    const bob = await t.createUser();
    const db = t.deps.db;
    await put(alice, 'one.png');
    await put(alice, 'two.png');
    expect([(await own(alice, 'png')).totalImages, (await admin({ originalName: 'png' })).totalImages]).toEqual([2, 2]);
    // As above, a name changed behind the lists' back: a fresh count would now say one fewer, so
    // the totals below tell a carried count from a fresh one.
    await db.updateTable('files').set({ original_name: 'one.txt' }).where('original_name', '=', 'one.png').execute();

    const three = await put(alice, 'three.png');
    await put(alice, 'notes.txt');
    await put(bob, 'beach.PNG');
    expect([(await own(alice, 'png')).totalImages, (await own(alice, 'Png')).totalImages, (await admin({ originalName: 'png' })).totalImages]).toEqual([3, 3, 4]);
    expect((await t.call('/api/v1/files/delete', { filePath: three }, { token: alice.token })).status).toBe(200);
    expect([(await own(alice, 'png')).totalImages, (await admin({ originalName: 'png' })).totalImages]).toEqual([2, 3]);
    // What the log holds for that: each file's names, as it came and as it went.
    const logged = await db.selectFrom('file_list_log').select(['original_name', 'actual_name', 'delta']).where('file_id', 'in', db.selectFrom('files').select('id').where('actual_name', '=', three)).execute();
    expect(logged).toEqual([]);
    expect(await db.selectFrom('file_list_log').select(['original_name', 'actual_name', 'delta']).where('actual_name', '=', three).orderBy('changes').execute()).toEqual([
      { original_name: 'three.png', actual_name: three, delta: 1 },
      { original_name: 'three.png', actual_name: three, delta: -1 },
    ]);

    // Log entries pruned: counted afresh (one.txt no longer matches).
    await put(alice, 'five.png');
    await db.deleteFrom('file_list_log').execute();
    expect([(await own(alice, 'png')).totalImages, (await admin({ originalName: 'png' })).totalImages]).toEqual([2, 3]);

    // Entries logged before the log held names: counted afresh.
    await put(alice, 'six.png');
    await db.updateTable('file_list_log').set({ original_name: null, actual_name: null }).execute();
    expect([(await own(alice, 'png')).totalImages, (await admin({ originalName: 'png' })).totalImages]).toEqual([3, 4]);

    // More changes than MAX_CARRIED since the count: counted afresh.
    await db.updateTable('files').set({ original_name: 'six.txt' }).where('original_name', '=', 'six.png').execute();
    const rows: FilesTable[] = [];
    for (let i = 0; i <= MAX_CARRIED; i++) {
      rows.push({ id: `mc${String(i).padStart(5, '0')}`, actual_name: `mc${String(i).padStart(7, '0')}.bin`, original_name: `doc-${i}.txt`, user_id: alice.id,
        size: 10, mime_type: 'text/plain', width: null, height: null, time_created: 1_700_000_000 + i, storage_key: `mc${i}`, sha256: null, previews: '[]' });
    }
    for (let i = 0; i < rows.length; i += 500) await db.insertInto('files').values(rows.slice(i, i + 500)).execute();
    expect([(await own(alice, 'png')).totalImages, (await admin({ originalName: 'png' })).totalImages]).toEqual([2, 3]);
  });

  it('keeps a count under the counter its own statement read: a file landing just before the count is not carried in twice', async () => {
    t = await createHttpTestApp(dialect);
    const user = await t.createUser();
    const row = (name: string, i: number): FilesTable => ({ id: `race${i}`, actual_name: `race${i}.bin`, original_name: name, user_id: user.id, size: 10, mime_type: 'image/png',
      width: null, height: null, time_created: 1_700_000_000 + i, storage_key: `race${i}`, sha256: null, previews: '[]' });
    await t.deps.db.insertInto('files').values(row('a.png', 1)).execute();
    // A file lands right after the list's counter is read for the kept count's lookup, before the count runs.
    // Not awaited here: SQLite's one connection is still held by the statement whose result this
    // is; its insert is queued ahead of the count, PostgreSQL's runs on another connection now.
    let landing: FilesTable | null = row('b.png', 2);
    let landed: Promise<unknown> | null = null;
    const racing = t.deps.db.withPlugin({
      transformQuery: (args) => args.node,
      transformResult: (args) => {
        const first = args.result.rows[0];
        if (landing && first && typeof first === 'object' && 'file_count' in first && 'changes' in first) {
          landed = t.deps.db.insertInto('files').values(landing).execute();
          landing = null;
          if (dialect === 'postgres') return landed.then(() => args.result);
        }
        return Promise.resolve(args.result);
      },
    });
    const q = { userId: user.id, originalName: 'png', sort: 'newest' as const, page: 1, pageSize: 6 };
    expect((await listFiles(racing, q)).total).toBe(2);
    expect(landed).not.toBeNull();
    await landed;
    await t.deps.db.insertInto('files').values(row('c.png', 3)).execute();
    expect((await listFiles(racing, q)).total).toBe(3);
  });

  it("carries a large list's count another process kept instead of counting every match again", async () => {
    t = await createHttpTestApp(dialect);
    const alice = await t.createUser();
    const small = await t.createUser();
    const db = t.deps.db;
    const rows: FilesTable[] = [];
    for (let i = 0; i < SHARED_FROM; i++) {
      rows.push({ id: `sc${String(i).padStart(5, '0')}`, actual_name: `sc${String(i).padStart(7, '0')}.bin`, original_name: i % 4 === 0 ? `shot-${i}.png` : `doc-${i}.txt`, user_id: alice.id,
        size: 10, mime_type: 'text/plain', width: null, height: null, time_created: 1_700_000_000 + i, storage_key: `sc${i}`, sha256: null, previews: '[]' });
    }
    for (let i = 0; i < rows.length; i += 500) await db.insertInto('files').values(rows.slice(i, i + 500)).execute();
    await put(small, 'tiny.png');
    const matches = SHARED_FROM / 4;
    // This process counts both lists; only the large one's count is kept for the others.
    expect([(await own(alice, 'png')).totalImages, (await own(small, 'png')).totalImages]).toEqual([matches, 1]);
    expect(await db.selectFrom('file_name_counts').select(['user_id', 'total']).execute()).toEqual([{ user_id: alice.id, total: matches }]);
    // A name changed behind the lists' back, so a fresh count would say one fewer.
    await db.updateTable('files').set({ original_name: 'shot-0.txt' }).where('original_name', '=', 'shot-0.png').execute();
    const q = { userId: alice.id, originalName: 'png', sort: 'newest' as const, page: 1, pageSize: 6 };
    const second = await otherProcess();
    try {
      expect((await listFiles(second.db, q)).total).toBe(matches);
      // Carried through the log after an upload.
      await put(alice, 'new.png');
      const third = await otherProcess();
      try {
        expect((await listFiles(third.db, q)).total).toBe(matches + 1);
      } finally {
        await third.close();
      }
      // None kept by any: counted afresh (and kept anew).
      await db.deleteFrom('file_name_counts').execute();
      const fourth = await otherProcess();
      try {
        expect((await listFiles(fourth.db, q)).total).toBe(matches);
        expect(await db.selectFrom('file_name_counts').select('total').execute()).toEqual([{ total: matches }]);
      } finally {
        await fourth.close();
      }
    } finally {
      await second.close();
    }
    // The owner's removal takes their kept counts with them.
    expect((await t.call('/api/v1/admin/set/remove', { userId: alice.id }, { token: t.admin.token })).status).toBe(200);
    expect(await db.selectFrom('file_name_counts').selectAll().execute()).toEqual([]);
  });

  it('keeps at most the given number of shared counts, the most recently kept', async () => {
    t = await createHttpTestApp(dialect);
    const db = t.deps.db;
    for (let i = 0; i < 12; i++) {
      await saveCount(db, `k${i}`, undefined, { changes: 1, total: i, viaTrigrams: false }, 10);
      // Kept at distinct times: the order pruning goes by.
      const before = Date.now();
      await until(async () => Date.now(), (now) => now > before);
    }
    expect((await db.selectFrom('file_name_counts').select('key').orderBy('key').execute()).map((r) => r.key)).toEqual(['k10', 'k11', 'k2', 'k3', 'k4', 'k5', 'k6', 'k7', 'k8', 'k9']);
    // A count read under an earlier counter does not replace a later one.
    await saveCount(db, 'k5', undefined, { changes: 0, total: 99, viaTrigrams: false }, 10);
    expect(await loadCount(db, 'k5')).toEqual({ changes: 1, total: 5, viaTrigrams: false });
  });

  it('pages a filter most names match from its kept count exactly as sorting the matches would, in every sort', async () => {
    t = await createHttpTestApp(dialect);
    const user = await t.createUser();
    const other = await t.createUser();
    // Straight into the table (the triggers still run): two names in three match, ties in time
    // and size everywhere, and another owner's matches between them.
    const rows: FilesTable[] = [];
    for (let i = 0; i < 330; i++) {
      const name = i % 3 === 0 ? `IMG_${i}.jpg` : `shot-${i}.PNG`;
      rows.push({ id: `n${String((i * 7919) % 1009).padStart(4, '0')}x${i}`, actual_name: `nc${String(i).padStart(6, '0')}.bin`, original_name: name, user_id: i % 11 === 0 ? other.id : user.id,
        size: 10 + (i % 7), mime_type: 'image/png', width: null, height: null, time_created: 1_700_000_000 + (i % 13), storage_key: `nc${i}`, sha256: null, previews: '[]' });
    }
    await t.deps.db.insertInto('files').values(rows).execute();
    const mine = rows.filter((r) => r.user_id === user.id && r.original_name.toLowerCase().includes('png'));
    const cmp = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
    const reference: Record<string, (a: FilesTable, b: FilesTable) => number> = {
      newest: (a, b) => b.time_created - a.time_created || cmp(b.id, a.id),
      oldest: (a, b) => a.time_created - b.time_created || cmp(a.id, b.id),
      largest: (a, b) => b.size - a.size || cmp(a.id, b.id),
      smallest: (a, b) => a.size - b.size || cmp(a.id, b.id),
    };
    for (const [sort, order] of Object.entries(reference)) {
      const seen: string[] = [];
      for (let page = 1; page <= Math.ceil(mine.length / 7) + 1; page++) {
        const res = await t.call<ListBody>('/api/v1/files/uploaded', { filters: { name: 'png' }, sort, page, pageSize: 7 }, { token: user.token });
        expect(res.body.totalImages, `${sort} page ${page}`).toBe(mine.length);
        seen.push(...res.body.files.map((f) => f.actual_name));
      }
      expect(seen, sort).toEqual([...mine].sort(order).map((r) => r.actual_name));
    }
    if (dialect === 'postgres') {
      // With the count known, page 2 walks the owner's sort index and checks each name on the way,
      // instead of reading every match from pg_trgm and sorting them.
      const walk = await queryPlan(t.deps.db, walkedPageIds(t.deps.db, { userId: user.id, originalName: 'png', sort: 'newest', page: 2, pageSize: 7 }, 1_000), ['seqscan', 'bitmapscan']);
      expect(walk).toContain('files_user_time_id');
      expect(walk).not.toMatch(/trgm|Sort Key/);
    }
  });

  it('pages matches that sit together far down the list exactly, though the walk its count suggests does not reach them', async () => {
    t = await createHttpTestApp(dialect);
    const user = await t.createUser();
    // A third of the names match, all of them the oldest files (photos of one year, uploaded together).
    const rows: FilesTable[] = [];
    for (let i = 0; i < 3_000; i++) {
      rows.push({ id: `cl${String(i).padStart(5, '0')}`, actual_name: `cl${String(i).padStart(7, '0')}.bin`, original_name: i < 1_000 ? `IMG_2019_${i}.jpg` : `IMG_2024_${i}.jpg`, user_id: user.id,
        size: 10 + (i % 9), mime_type: 'image/jpeg', width: null, height: null, time_created: 1_700_000_000 + i, storage_key: `cl${i}`, sha256: null, previews: '[]' });
    }
    for (let i = 0; i < rows.length; i += 500) await t.deps.db.insertInto('files').values(rows.slice(i, i + 500)).execute();
    const newest = rows.filter((r) => r.original_name.toLowerCase().includes('img_2019')).sort((a, b) => b.time_created - a.time_created);
    for (const page of [1, 2, 1]) {
      const res = await t.call<ListBody>('/api/v1/files/uploaded', { filters: { name: 'img_2019' }, page, pageSize: 6 }, { token: user.token });
      expect(res.body.totalImages).toBe(1_000);
      expect(res.body.files.map((f) => f.actual_name), `page ${page}`).toEqual(newest.slice((page - 1) * 6, page * 6).map((r) => r.actual_name));
    }
    if (dialect === 'postgres') {
      // The walk stops after the rows it was given (the 1,000 newest hold no match) rather than read the list.
      expect(await walkedPageIds(t.deps.db, { userId: user.id, originalName: 'img_2019', sort: 'newest', page: 1, pageSize: 6 }, 1_000).execute()).toEqual([]);
      expect(await walkedPageIds(t.deps.db, { userId: user.id, originalName: 'img_2019', sort: 'newest', page: 1, pageSize: 6 }, 2_001).execute()).toHaveLength(1);
    }
  });

});

describe('wide name filters on SQLite (issue 9)', () => {
  let t: HttpTestApp;
  afterEach(async () => t?.close());

  it('reads a large list\'s wide filter on a thread of its own, with the same answers', async () => {
    t = await createHttpTestApp('sqlite');
    const user = await t.createUser();
    const rows: FilesTable[] = [];
    for (let i = 0; i < OFF_THREAD_ROWS + 500; i++) {
      rows.push({ id: `w${String(i).padStart(6, '0')}`, actual_name: `wd${String(i).padStart(7, '0')}.bin`, original_name: i % 4 === 0 ? `IMG_${i}.jpg` : `shot_${i}.png`, user_id: user.id,
        size: 10 + (i % 5), mime_type: 'image/png', width: null, height: null, time_created: 1_700_000_000 + Math.floor(i / 3), storage_key: `wd${i}`, sha256: null, previews: '[]' });
    }
    for (let i = 0; i < rows.length; i += 500) await t.deps.db.insertInto('files').values(rows.slice(i, i + 500)).execute();
    const before = offThreadReads();
    // "_9" is too short for trigrams; "png" is in three names in four.
    for (const needle of ['_9', 'png']) {
      const matches = rows.filter((r) => r.original_name.includes(needle)).sort((a, b) => b.time_created - a.time_created || (a.id < b.id ? 1 : -1));
      const res = await t.call<ListBody>('/api/v1/files/uploaded', { filters: { name: needle }, page: 3, pageSize: 5 }, { token: user.token });
      expect(res.body.totalImages, needle).toBe(matches.length);
      expect(res.body.files.map((f) => f.actual_name), needle).toEqual(matches.slice(10, 15).map((r) => r.actual_name));
    }
    // Each count scanned the table away from the event loop.
    expect(offThreadReads()).toBeGreaterThanOrEqual(before + 2);
  });
});

describe('name-counts', () => {
  const db = {} as Database;

  it('keeps a count only for the counter value it was read under, and never for a username filter', () => {
    const key = countKey({ userId: 'u1', originalName: 'png' });
    keepCount(db, key, 7, { total: 40, viaTrigrams: false });
    expect(knownCount(db, key, 7)).toEqual({ total: 40, viaTrigrams: false });
    expect(knownCount(db, key, 8)).toBeUndefined();
    expect(knownCount(db, countKey({ userId: 'u2', originalName: 'png' }), 7)).toBeUndefined();
    expect(knownCount(db, countKey({ originalName: 'png' }), 7)).toBeUndefined();
    expect(countKey({ username: 'bob', originalName: 'png' })).toBeNull();
    expect(knownCount(db, key, null)).toBeUndefined();
    // The needle is matched without regard to case: one count for every spelling.
    expect(countKey({ userId: 'u1', originalName: 'PnG' })).toBe(key);
    // A count read under an earlier counter never replaces one read under a later one.
    keepCount(db, key, 9, { total: 41, viaTrigrams: false });
    keepCount(db, key, 8, { total: 39, viaTrigrams: false });
    expect(knownCount(db, key, 9)).toEqual({ total: 41, viaTrigrams: false });
  });

  it('holds at most KEPT_COUNTS, dropping the one used least recently', () => {
    const other = {} as Database;
    const keyOf = (i: number) => countKey({ userId: 'u', originalName: `n${i}` });
    for (let i = 0; i < KEPT_COUNTS; i++) keepCount(other, keyOf(i), 1, { total: i, viaTrigrams: true });
    expect(knownCount(other, keyOf(0), 1)?.total).toBe(0);
    keepCount(other, keyOf(KEPT_COUNTS), 1, { total: KEPT_COUNTS, viaTrigrams: true });
    // n0 was used just now, so n1 went.
    expect(knownCount(other, keyOf(0), 1)?.total).toBe(0);
    expect(knownCount(other, keyOf(1), 1)).toBeUndefined();
    expect(knownCount(other, keyOf(KEPT_COUNTS), 1)?.total).toBe(KEPT_COUNTS);
  });
});
