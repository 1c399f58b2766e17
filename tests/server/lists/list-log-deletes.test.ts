import { afterEach, describe, expect, it } from 'vitest';
import { DIALECTS, createTestApp, type TestApp } from '../../helpers/test-app.ts';
import type { FilesTable } from '../../../server/db/schema.ts';

/**
 * A delete of many files in one statement (an account's removal deletes 500 at a time) must
 * count and log exactly what one delete per file does: the lists carry their anchors and name
 * counts over the log's entries (files/list-anchors.ts, files/name-counts.ts). On PostgreSQL the
 * counting trigger runs per statement (migration 2026-12-04-10), so this is where its numbering
 * is held to the row trigger's.
 */
describe.each(DIALECTS)('files deleted by one statement on %s', (dialect) => {
  let t: TestApp;
  afterEach(async () => t?.close());

  /** Files of two owners, interleaved, ids in an order unlike the insert order; `tag` keeps each batch's ids apart. */
  async function insertFiles(owners: string[], tag: string): Promise<string[]> {
    const rows: FilesTable[] = Array.from({ length: 12 }, (_, i) => {
      const name = `${tag}${String((i * 5) % 12).padStart(2, '0')}`;
      return { id: `id-${name}`, actual_name: `${name}.png`, original_name: `holiday ${i}.png`, user_id: owners[i % 3 === 0 ? 1 : 0]!, size: 100 + i,
        mime_type: 'image/png', width: null, height: null, time_created: 1_700_000_000 + i, storage_key: `key-${name}`, sha256: null, previews: null };
    });
    await t.deps.db.insertInto('files').values(rows).execute();
    return rows.map((r) => r.id);
  }

  async function counters(owners: string[]) {
    const site = await t.deps.db.selectFrom('file_totals').select(['file_count', 'changes']).where('id', '=', 1).executeTakeFirstOrThrow();
    const own = await t.deps.db.selectFrom('file_counts').select(['user_id', 'file_count', 'changes']).where('user_id', 'in', owners).execute();
    return {
      site: { files: Number(site.file_count), changes: Number(site.changes) },
      owners: owners.map((o) => {
        const row = own.find((r) => r.user_id === o)!;
        return { files: Number(row.file_count), changes: Number(row.changes) };
      }),
    };
  }

  /** The log's entries since `before`, their counter values and names told relative to it, so two batches compare. */
  async function loggedSince(before: Awaited<ReturnType<typeof counters>>, owners: string[], tag: string) {
    const rows = await t.deps.db.selectFrom('file_list_log').selectAll().where('changes', '>', before.site.changes).orderBy('changes').execute();
    return rows.map((r) => {
      const owner = owners.indexOf(r.user_id);
      return {
        changes: Number(r.changes) - before.site.changes,
        owner,
        userChanges: r.user_changes === null ? null : Number(r.user_changes) - before.owners[owner]!.changes,
        file: r.file_id.replace(tag, ''),
        size: Number(r.size),
        time: Number(r.time_created),
        delta: Number(r.delta),
        names: [r.original_name, r.actual_name?.replace(tag, '')],
      };
    });
  }

  it('counts and logs a many-file delete as the same files deleted one by one, and a delete of nothing as nothing', async () => {
    t = await createTestApp(dialect);
    const owners = [(await t.createUser()).id, (await t.createUser()).id];

    const single = await insertFiles(owners, 'one');
    const beforeSingle = await counters(owners);
    // One statement per file, in id order: the order the statement trigger numbers a many-row delete's files in.
    for (const id of [...single].sort()) await t.deps.db.deleteFrom('files').where('id', '=', id).execute();
    const afterSingle = await counters(owners);
    const singleLog = await loggedSince(beforeSingle, owners, 'one');

    const many = await insertFiles(owners, 'many');
    const beforeMany = await counters(owners);
    await t.deps.db.deleteFrom('files').where('id', 'in', many).execute();
    const afterMany = await counters(owners);
    const manyLog = await loggedSince(beforeMany, owners, 'many');

    // Which file takes which number is the order the database visits the rows in (SQLite: its
    // own); the numbers themselves are one step each, for the site and for each owner.
    for (const log of [singleLog, manyLog]) {
      expect(log.map((e) => e.changes)).toEqual(Array.from({ length: 12 }, (_, i) => i + 1));
      expect(log.filter((e) => e.owner === 0).map((e) => e.userChanges)).toEqual(Array.from({ length: 8 }, (_, i) => i + 1));
      expect(log.filter((e) => e.owner === 1).map((e) => e.userChanges)).toEqual(Array.from({ length: 4 }, (_, i) => i + 1));
    }
    const byFile = (log: typeof singleLog) => log.map(({ changes: _c, userChanges: _u, ...rest }) => rest).sort((a, b) => a.file.localeCompare(b.file));
    expect(byFile(manyLog)).toEqual(byFile(singleLog));
    const moved = (a: typeof beforeSingle, b: typeof beforeSingle) => ({
      site: [b.site.files - a.site.files, b.site.changes - a.site.changes],
      owners: b.owners.map((o, i) => [o.files - a.owners[i]!.files, o.changes - a.owners[i]!.changes]),
    });
    expect(moved(beforeMany, afterMany)).toEqual(moved(beforeSingle, afterSingle));
    expect(moved(beforeMany, afterMany)).toEqual({ site: [-12, 12], owners: [[-8, 8], [-4, 4]] });

    await t.deps.db.deleteFrom('files').where('id', '=', 'no-such-file').execute();
    expect(await counters(owners)).toEqual(afterMany);
  });
});
