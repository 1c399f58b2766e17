import pMap from 'p-map';
import type { Database } from '../../db/index.ts';
import type { Deps } from '../../deps.ts';
import { nowSeconds } from '../../lib/ids.ts';
import { previewKeys } from '../media/previews.ts';

/**
 * Bytes whose rows are gone (migration 2026-12-03-20). A delete writes its keys here in the
 * transaction that deletes the rows, so a crash or a store that is down right after cannot leave
 * bytes in the store for good: they stay listed until the store has let go of each. Nothing is
 * served from here; the files host answers from the rows, which are gone.
 */

/** Keys read per statement, and deletes the store is asked for at once (S3's client keeps 50 sockets). */
const BATCH = 200;
const CONCURRENCY = 8;

/**
 * Deletes one file's row, or up to `limit` of an account's, and lists their objects in the same
 * transaction (`trx`). The keys are those the deleted rows held as they went (`returning`), so
 * previews recorded a moment before are not left behind. How many rows went.
 */
export async function deleteFilesDooming(trx: Database, which: { id: string } | { userId: string; limit: number }, now = nowSeconds()): Promise<number> {
  const rows =
    'id' in which
      ? trx.deleteFrom('files').where('id', '=', which.id)
      : trx.deleteFrom('files').where('id', 'in', trx.selectFrom('files').select('id').where('user_id', '=', which.userId).limit(which.limit));
  const gone = await rows.returning(['storage_key', 'previews']).execute();
  if (gone.length === 0) return 0;
  await trx
    .insertInto('doomed_bytes')
    .values(gone.map((f) => ({ storage_key: f.storage_key, previews: f.previews ?? null, kind: 'file' as const, doomed_at: now })))
    .onConflict((oc) => oc.column('storage_key').doNothing())
    .execute();
  return gone.length;
}

/** In the transaction that deletes an account: its unfinished uploads' parts. */
export async function doomUploadsOfUser(trx: Database, userId: string, now = nowSeconds()): Promise<void> {
  // An upload being finished may have made its key a stored object already: 'upload' does both.
  await trx
    .insertInto('doomed_bytes')
    .columns(['storage_key', 'previews', 'kind', 'doomed_at'])
    .expression((eb) => eb.selectFrom('uploads').select((s) => ['storage_key', s.val(null).as('previews'), s.val('upload').as('kind'), s.val(now).as('doomed_at')]).where('user_id', '=', userId))
    .onConflict((oc) => oc.column('storage_key').doUpdateSet({ kind: 'upload' }))
    .execute();
}

/**
 * How long a renderer's preview keys stay listed before a pass may take them
 * (media/preview-queue.ts): the keys are listed before their objects are written, and unlisted by
 * the transaction that records them, so a pass must not take them while that is under way. The
 * rendering itself is over before they are listed; what is left is writing three small objects and
 * one update, so an hour is far past it. A renderer that finds its keys taken meanwhile records
 * nothing (the file is rendered again by a later backfill).
 */
export const PREVIEW_INTENT_SECONDS = 60 * 60;

/**
 * Lists a renderer's preview keys before their objects are written, due `PREVIEW_INTENT_SECONDS`
 * from `now` (`doomed_at` is when a pass may take a key). 'upload': a key may be left half
 * written (`writeAt` without `finalize`) or stored, and that kind does both.
 */
export async function doomPreviewKeys(db: Database, keys: string[], now = nowSeconds()): Promise<void> {
  if (keys.length === 0) return;
  await db
    .insertInto('doomed_bytes')
    .values(keys.map((storage_key) => ({ storage_key, previews: null, kind: 'upload' as const, doomed_at: now + PREVIEW_INTENT_SECONDS })))
    .onConflict((oc) => oc.column('storage_key').doNothing())
    .execute();
}

/**
 * In the transaction that records a file's previews: unlists its keys. False when any was taken
 * meanwhile (a pass past their time), whose objects may be gone: the caller records nothing.
 */
export async function keepPreviewKeys(trx: Database, keys: string[]): Promise<boolean> {
  if (keys.length === 0) return true;
  const res = await trx.deleteFrom('doomed_bytes').where('storage_key', 'in', keys).executeTakeFirst();
  return Number(res.numDeletedRows) === keys.length;
}

/** Preview keys their renderer is done with (its record lost, or failed): due at once, then reclaimed. */
export async function dropPreviewKeys(deps: Pick<Deps, 'db' | 'storage'>, keys: string[], now = nowSeconds()): Promise<ReclaimPass> {
  if (keys.length === 0) return { reclaimed: 0, failed: 0, more: false };
  await deps.db.updateTable('doomed_bytes').set({ doomed_at: now }).where('storage_key', 'in', keys).execute();
  return reclaimDoomedBytes(deps, { keys, now });
}

export interface ReclaimPass {
  /** Keys whose bytes the store has let go of (and whose rows here are gone). */
  reclaimed: number;
  /** Keys the store refused this time; left for the next pass. */
  failed: number;
  /** Whether keys were left unread because `limit` was reached. */
  more: boolean;
  /** The first refusal, for the log. */
  firstError?: unknown;
}

/**
 * One pass over the doomed keys (or only `keys`), in key order, `BATCH` at a time with at most
 * `CONCURRENCY` deletes in flight: each key's objects deleted, then its row. A key the store
 * refuses stays for the next pass; the pass goes on past it. `limit`: keys read at most;
 * `stopped`: asked before each batch (a process shutting down). Only keys due by `now` are taken:
 * a preview key being written and recorded is listed with a later time (`doomPreviewKeys`).
 */
export async function reclaimDoomedBytes(
  deps: Pick<Deps, 'db' | 'storage'>,
  options: { keys?: string[]; limit?: number; stopped?: () => boolean; now?: number } = {},
): Promise<ReclaimPass> {
  const now = options.now ?? nowSeconds();
  const pass: ReclaimPass = { reclaimed: 0, failed: 0, more: false };
  const limit = options.limit ?? Infinity;
  let after: string | null = null;
  let read = 0;
  for (;;) {
    const take = Math.min(BATCH, limit - read);
    if (take <= 0 || options.stopped?.()) {
      pass.more = (await doomedAfter(deps.db, after, options.keys, now).select('storage_key').limit(1).execute()).length > 0;
      return pass;
    }
    const rows = await doomedAfter(deps.db, after, options.keys, now).selectAll().orderBy('storage_key').limit(take).execute();
    read += rows.length;
    const gone: string[] = [];
    await pMap(
      rows,
      async (row) => {
        try {
          // Missing objects are fine for both calls (storage.ts): a pass cut short is run again.
          if (row.kind === 'upload') await deps.storage.discard(row.storage_key);
          // Every delete settled before the row is judged: a refusal does not leave others in flight.
          const deleted = await Promise.allSettled([row.storage_key, ...previewKeys(row.storage_key, row.previews)].map((key) => deps.storage.delete(key)));
          const refused = deleted.find((d) => d.status === 'rejected');
          if (refused) throw refused.reason;
          gone.push(row.storage_key);
        } catch (err) {
          pass.failed += 1;
          pass.firstError ??= err;
        }
      },
      { concurrency: CONCURRENCY },
    );
    if (gone.length > 0) await deps.db.deleteFrom('doomed_bytes').where('storage_key', 'in', gone).execute();
    pass.reclaimed += gone.length;
    if (rows.length < take) return pass;
    after = rows[rows.length - 1]!.storage_key;
  }
}

/** The doomed keys a pass has still to read: due by `now`, past `after`, and among `keys` when given. */
function doomedAfter(db: Database, after: string | null, keys: string[] | undefined, now: number) {
  let rows = db.selectFrom('doomed_bytes').where('doomed_at', '<=', now);
  if (after !== null) rows = rows.where('storage_key', '>', after);
  if (keys) rows = rows.where('storage_key', 'in', keys.length > 0 ? keys : ['']);
  return rows;
}

/** Keys still waiting for the store to let go of their objects. */
export async function doomedKeys(db: Database): Promise<number> {
  const row = await db.selectFrom('doomed_bytes').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirst();
  return Number(row?.n ?? 0);
}

/** Passes running in the background, one per database handle (a process has one; tests have many). */
const background = new WeakMap<Database, { again: boolean; done: Promise<void> }>();

/**
 * Runs passes in the background until one finds nothing new to ask for; asked again while one
 * runs, it runs another after it (keys doomed behind the running pass's cursor). A store that
 * refuses leaves its keys to the periodic pass (jobs.ts).
 */
export function reclaimInBackground(deps: Pick<Deps, 'db' | 'storage'>, log: (message: string, err?: unknown) => void): Promise<void> {
  const running = background.get(deps.db);
  if (running) {
    running.again = true;
    return running.done;
  }
  const state = { again: true, done: Promise.resolve() };
  state.done = (async () => {
    while (state.again) {
      state.again = false;
      const pass = await reclaimDoomedBytes(deps);
      if (pass.failed > 0) log(`the store refused to delete ${pass.failed} doomed objects; they are tried again later`, pass.firstError);
    }
  })()
    .catch((err: unknown) => log('reclaiming doomed bytes failed; they are tried again later', err))
    .finally(() => background.delete(deps.db));
  background.set(deps.db, state);
  return state.done;
}
