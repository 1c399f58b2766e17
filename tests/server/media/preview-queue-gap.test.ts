import { afterEach, describe, expect, it } from 'vitest';
import type { Database } from '../../../server/db/index.ts';
import { newId } from '../../../server/lib/ids.ts';
import { until } from '../../helpers/poll.ts';
import { createTestApp, DIALECTS, type TestApp } from '../../helpers/test-app.ts';

/**
 * The database as the queue sees it, calling `after` once each preview record is written
 * (recordPreviews: the last thing the queue awaits for a file).
 */
function onRecord<T extends object>(db: T, after: () => void, inUpdate = false): T {
  return new Proxy(db, {
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver) as unknown;
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        const result = (value as (...a: unknown[]) => unknown).apply(target, args);
        if (inUpdate && prop === 'executeTakeFirst') {
          void (result as Promise<unknown>).then(after);
          return result;
        }
        const building = inUpdate || prop === 'updateTable';
        return building && result !== null && typeof result === 'object' ? onRecord(result, after, true) : result;
      };
    },
  });
}

describe.each(DIALECTS)('the preview queue on %s (issue 11 item 9)', (dialect) => {
  let t: TestApp;
  afterEach(async () => t?.close());

  async function listText(userId: string): Promise<string> {
    const id = newId();
    await t.deps.db
      .insertInto('files')
      .values({ id, actual_name: `${id}.txt`, original_name: 'a.txt', user_id: userId, size: 5, mime_type: 'text/plain',
        width: null, height: null, time_created: 1_700_000_000, storage_key: `k${id}`.padEnd(12, '0'), sha256: null, previews: null })
      .execute();
    return id;
  }

  const recorded = async (id: string) => (await t.deps.db.selectFrom('files').select('previews').where('id', '=', id).executeTakeFirstOrThrow()).previews;

  it('takes up a file queued in the moment its queue empties', async () => {
    t = await createTestApp(dialect);
    const user = await t.createUser();
    const queue = t.deps.previews as unknown as { db: Database };
    for (let ticks = 0; ticks <= 8; ticks++) {
      const first = await listText(user.id);
      const next = await listText(user.id);
      let queuedNext = false;
      // `ticks` microtasks after the first file's record: somewhere in there the queue's loop has
      // found nothing left and its run has not yet been marked over.
      queue.db = onRecord(t.deps.db, () => {
        if (queuedNext) return;
        queuedNext = true;
        let hop = Promise.resolve();
        for (let i = 0; i < ticks; i++) hop = hop.then(() => {});
        void hop.then(() => t.deps.previews.enqueue(next));
      });
      t.deps.previews.enqueue(first);
      expect(await until(() => recorded(next), (v) => v !== null, 10_000), `queued ${ticks} microtasks after the last record`).toBe('[]');
      queue.db = t.deps.db;
    }
  });
});
