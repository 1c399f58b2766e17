import { sql } from 'kysely';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { until } from '../../helpers/poll.ts';
import { queryPlan } from '../../helpers/query-plan.ts';
import { DIALECTS } from '../../helpers/test-app.ts';
import { createHttpTestApp, randomBytes, sendMultipart, type HttpTestApp } from '../../helpers/upload.ts';
import { pageIdsQuery } from '../../../server/modules/files/list-reads.ts';
import { DENSE_SHARE, EMPTY_STATS_TTL_MS, nameStats, probePieces, sampleShare, type SampledName } from '../../../server/modules/files/name-probe.ts';

const sample = (names: string[]): SampledName[] => names.map((name) => ({ name, weight: 1 / names.length }));
// A site where a fifth of the names are holiday-N, as in the list benchmark: "holiday" and "ay-" are common.
const SITE = sample([
  ...Array.from({ length: 20 }, (_, i) => `holiday-${1000 + i * 37}.png`),
  ...Array.from({ length: 80 }, (_, i) => `img_${5000 + i * 13}.jpg`),
]);

describe('which pieces of a name filter the trigram index is asked for (issue 9)', () => {
  it('leaves out the common trigrams and keeps the rare rest of the needle', () => {
    expect(probePieces('holiday-4321', SITE)).toEqual(['y-4321']);
    // Rare runs on both sides of a common stretch become two pieces, each checked by the index.
    expect(probePieces('zz9-holiday-xyz1', SITE)).toEqual(['zz9-ho', 'y-xyz1']);
  });

  it('asks for the whole needle when that is the best it can do', () => {
    expect(probePieces('4321', SITE), 'every trigram is rare').toBeNull();
    expect(probePieces('holiday', SITE), 'every trigram is common').toBeNull();
    expect(probePieces('hol', SITE), 'a single trigram').toBeNull();
    expect(probePieces('holiday-4321', []), 'no statistics yet').toBeNull();
    // The rare rest has no run of three letters or digits, from which pg_trgm would take nothing to look up.
    expect(probePieces('holiday-%_', SITE)).toBeNull();
  });
});

describe('how many names the statistics say hold a needle (issue 9)', () => {
  it('weighs the sampled names that hold it', () => {
    expect(sampleShare('holiday', SITE)).toBeCloseTo(0.2);
    expect(sampleShare('.jpg', SITE)).toBeCloseTo(0.8);
    expect(sampleShare('4321', SITE)).toBe(0);
    expect(sampleShare('holiday', []), 'no statistics yet').toBe(0);
    expect(sampleShare('holiday', SITE)).toBeGreaterThanOrEqual(DENSE_SHARE);
  });
});

interface ListBody {
  files: { actual_name: string }[];
  totalImages: number;
}

describe.each(DIALECTS.filter((d) => d === 'postgres'))('name filter through the rare pieces on %s (issue 9)', (dialect) => {
  let t: HttpTestApp;
  afterEach(async () => {
    vi.useRealTimers();
    await t?.close();
  });

  it('answers from the sample at hand while a stale one is read again, then from the new one', async () => {
    t = await createHttpTestApp(dialect);
    const user = await t.createUser();
    const fill = (prefix: string) => sql`insert into files (id, actual_name, original_name, user_id, size, mime_type, time_created, storage_key, sha256, previews)
      select ${prefix} || i, ${prefix} || i || '.bin', ${prefix} || '-' || i || '.png', ${user.id}, 10, 'image/png', 1700000000 + i, ${prefix} || lpad(i::text, 10, '0'), lpad(to_hex(i), 64, '0'), '[]'
      from generate_series(0, 199) as i`;
    await fill('alpha').execute(t.deps.db);
    await sql`analyze files`.execute(t.deps.db);
    vi.useFakeTimers({ toFake: ['Date'] });
    const first = await nameStats(t.deps.db);
    expect(sampleShare('alpha', first.original_name)).toBe(1);

    await t.deps.db.deleteFrom('files').execute();
    await fill('beta').execute(t.deps.db);
    await sql`analyze files`.execute(t.deps.db);
    expect(await nameStats(t.deps.db), 'within the few minutes a sample is kept').toBe(first);
    vi.setSystemTime(Date.now() + 10 * 60_000);
    expect(await nameStats(t.deps.db), 'stale: answered at once from the older sample').toBe(first);
    const fresh = await until(() => nameStats(t.deps.db), (stats) => stats !== first);
    expect(sampleShare('beta', fresh.original_name)).toBe(1);
  });

  it('reads the statistics again within seconds when the sample at hand has no names (read before the first ANALYZE)', async () => {
    t = await createHttpTestApp(dialect);
    const user = await t.createUser();
    vi.useFakeTimers({ toFake: ['Date'] });
    // A site started on an empty database reads its sample before listening: there is none yet.
    const before = await nameStats(t.deps.db);
    expect(before.original_name).toEqual([]);
    // Its files are imported and analyzed; the filter must use them well before the five minutes a sample is kept.
    await sql`insert into files (id, actual_name, original_name, user_id, size, mime_type, time_created, storage_key, sha256, previews)
      select 'gamma' || i, 'gamma' || i || '.bin', 'gamma-' || i || '.png', ${user.id}, 10, 'image/png', 1700000000 + i, 'gamma' || lpad(i::text, 10, '0'), lpad(to_hex(i), 64, '0'), '[]'
      from generate_series(0, 199) as i`.execute(t.deps.db);
    await sql`analyze files`.execute(t.deps.db);
    vi.setSystemTime(Date.now() + EMPTY_STATS_TTL_MS);
    const read = await until(() => nameStats(t.deps.db), (stats) => stats.original_name.length > 0);
    expect(sampleShare('gamma', read.original_name)).toBe(1);
  });

  it('lists exactly the names that contain the needle, asking the index only for its rare part and sorting the matches', async () => {
    t = await createHttpTestApp(dialect);
    const user = await t.createUser();
    const names = ['holiday-4321.png', 'HOLIDAY-14321.jpg', 'holiday 4321.png' /* a space, not a dash */, 'my-4321.txt' /* the rare piece only */, 'IMG_0001.jpg'];
    for (const name of names) {
      const res = await sendMultipart(`${t.apiUrl}/api/v1/files/upload`, { fields: { token: user.token, originalname: name }, file: { data: randomBytes(8) } });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
    }
    // The rest of the site, where "holiday" is a third of all names and "-4321" in none: rows
    // only, as an import would make them, since listing reads no bytes.
    await sql`insert into files (id, actual_name, original_name, user_id, size, mime_type, time_created, storage_key, sha256, previews)
      select 'fill' || i, 'fill' || i || '.bin', case when i % 3 = 0 then 'Holiday-' || (1000 + i) || '.png' else 'img_' || (5000 + i * 13) || '.jpg' end,
             ${user.id}, 10, 'image/png', 1700000000 + i, 'fill' || lpad(i::text, 10, '0'), lpad(to_hex(i), 64, '0'), '[]'
      from generate_series(0, 599) as i`.execute(t.deps.db);
    const fill = await t.deps.db.selectFrom('files').select('original_name').where('id', 'like', 'fill%').execute();
    names.push(...fill.map((r) => r.original_name));
    // The statistics the probe reads are ANALYZE's, which autovacuum takes on a busy site.
    await sql`analyze files`.execute(t.deps.db);
    const stats = await nameStats(t.deps.db);
    expect(stats.original_name.length).toBeGreaterThan(0);

    // A few hundred rows make any plan cheap: forbid the other scans so the plan shows what the index is asked.
    const plan = await queryPlan(t.deps.db, pageIdsQuery(t.deps.db, { originalName: 'Holiday-4321', sort: 'newest', page: 1, pageSize: 6 }, stats), ['seqscan', 'indexscan']);
    expect(plan).toContain('files_original_name_trgm');
    expect(plan).toContain("Index Cond: (lower(original_name) ~~ '%y-4321%'::text)");
    expect(plan.split('\n').filter((line) => line.includes('Index Cond') && line.includes('holiday')), plan).toEqual([]);

    for (const needle of ['Holiday-4321', 'holiday-43', 'y-4321', '4321.png', 'holiday-15', 'holiday-9999']) {
      const res = await t.call<ListBody>('/api/v1/files/uploaded', { filters: { name: needle }, pageSize: 100 }, { token: user.token });
      const expected = names.filter((n) => n.toLowerCase().includes(needle.toLowerCase())).sort();
      const listed = await Promise.all(
        res.body.files.map(async (f) => (await t.deps.db.selectFrom('files').select('original_name').where('actual_name', '=', f.actual_name).executeTakeFirstOrThrow()).original_name),
      );
      expect(listed.sort(), needle).toEqual(expected);
      expect(res.body.totalImages, needle).toBe(expected.length);
    }
    // The page is sorted from the matches, never found by walking the sort index and filtering on
    // the way: even with sorting priced out, no index can give the order.
    for (const sort of ['newest', 'oldest', 'largest', 'smallest'] as const) {
      const walked = await queryPlan(t.deps.db, pageIdsQuery(t.deps.db, { userId: user.id, originalName: 'holiday-1', sort, page: 1, pageSize: 6 }, stats), ['sort']);
      expect(walked, sort).toMatch(/Sort Key/);
      expect(walked, sort).not.toMatch(/Index Scan( Backward)? using files_(user_)?(time|size)/);
    }

    // A needle a third of the names hold is read by a scan: its index would hand back most of the
    // table to recheck. Even with scans priced out, no plan can take the index for it.
    const dense = await queryPlan(t.deps.db, pageIdsQuery(t.deps.db, { originalName: 'HOLIDAY', sort: 'newest', page: 1, pageSize: 6 }, stats), ['seqscan', 'indexscan']);
    expect(dense).not.toContain('files_original_name_trgm');
    // Counted first, then paged: every page in order, with the total.
    const holidays = await t.deps.db.selectFrom('files').select(['actual_name', 'original_name', 'time_created', 'id']).where('user_id', '=', user.id).execute();
    const reference = holidays.filter((r) => r.original_name.toLowerCase().includes('holiday')).sort((a, b) => b.time_created - a.time_created || (a.id < b.id ? 1 : -1));
    const seen: string[] = [];
    for (let page = 1; page <= Math.ceil(reference.length / 50); page++) {
      const res = await t.call<ListBody>('/api/v1/files/uploaded', { filters: { name: 'HOLIDAY' }, page, pageSize: 50 }, { token: user.token });
      expect(res.body.totalImages).toBe(reference.length);
      seen.push(...res.body.files.map((f) => f.actual_name));
    }
    expect(seen).toEqual(reference.map((r) => r.actual_name));
  });
});
