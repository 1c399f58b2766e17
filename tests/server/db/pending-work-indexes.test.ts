import { afterEach, describe, expect, it } from 'vitest';
import { filesWithoutHashQuery } from '../../../server/modules/files/file-hashes.ts';
import { filesWithoutPreviewsQuery } from '../../../server/modules/media/previews.repository.ts';
import { queryPlan } from '../../helpers/query-plan.ts';
import { createTestApp, DIALECTS, type TestApp } from '../../helpers/test-app.ts';

/**
 * Issue 9 at a million files: the background work's "what is left to do" queries read a partial
 * index of the waiting rows (migration 2026-12-01-10). Read from the table, each found nothing
 * after scanning every file — 340–790 ms holding SQLite's event loop at each start and every
 * 10 minutes, 225–315 ms of PostgreSQL at 1,000,000 files.
 */
describe.each(DIALECTS)('the backfills find waiting files by index on %s', (dialect) => {
  let t: TestApp;
  afterEach(async () => t?.close());

  it('previews read files_previews_pending and hashes files_sha256_pending, in their order, without sorting', async () => {
    t = await createTestApp(dialect);
    // PostgreSQL: a table scan or the primary key filtered row by row would also answer; forbid
    // the scans so the plan shows whether an index holding only the waiting rows is there.
    const previews = await queryPlan(t.deps.db, filesWithoutPreviewsQuery(t.deps.db, '', 100), ['seqscan', 'bitmapscan', 'sort']);
    expect(previews).toContain('files_previews_pending');
    const hashes = await queryPlan(t.deps.db, filesWithoutHashQuery(t.deps.db, 50), ['seqscan', 'bitmapscan', 'sort']);
    expect(hashes).toContain('files_sha256_pending');
    for (const plan of [previews, hashes]) expect(plan).not.toMatch(/USE TEMP B-TREE FOR ORDER BY|Sort Key/);
  });
});
