import type { Database, Dialect } from '../../db/index.ts';
import { letDiskCatchUp } from '../../db/sqlite-write-pace.ts';
import type { Storage } from '../../storage/storage.ts';
import { PROCESS_HOLDER, releaseLease, renewLease, takeLease } from '../../job-lease.ts';
import { nowSeconds } from '../../lib/ids.ts';
import { reclaimDoomedBytes, reclaimInBackground } from '../files/doomed-bytes.ts';
import { filesGone } from '../files/files-gone.ts';
import { deleteUser } from './users.repository.ts';

/**
 * How long the admin's `admin/set/remove` (spec §4) waits for the removal before answering. Most
 * accounts are gone well inside it, so the answer still means "gone"; a large one is not: a
 * million files take minutes on SQLite (bench/README.md), past a proxy's patience (nginx's
 * `proxy_read_timeout`, README.md), so its removal goes on after the answer, the account hidden.
 */
export const ANSWER_WITHIN_MS = 10_000;
/** Objects of removed accounts deleted before the answer; a larger account's go on in the background. */
const RECLAIMED_BEFORE_ANSWER = 1_000;
/** The removals' lease: renewed after every batch, so a process that dies midway holds it this long at most. */
const LEASE = 'remove-accounts';
const LEASE_SECONDS = 60;

/** Between two batches the holder stopped or lost its lease: the account stays marked for the next run. */
class RemovalPaused extends Error {}

export interface AccountRemovalOptions {
  answerWithinMs?: number;
  /** Runs after each batch of an account's files (tests hold it); the lease is renewed after it. */
  between?: (db: Database) => Promise<void>;
  holder?: string;
  log?: (message: string, err?: unknown) => void;
}

/**
 * Accounts an admin removed are first marked (`users.removing_since`, in the request: signed
 * out, API keys gone, hidden from every lookup), then deleted one after the other, their files a
 * batch per transaction (users.repository.ts deleteUser), by whichever api process holds the
 * lease. A process that stops or dies midway leaves the account marked; the next run — the
 * next removal asked for, the periodic jobs (jobs.ts) or a start — goes on where it stopped.
 */
export class AccountRemovals {
  private running: Promise<void> | null = null;
  private again = false;
  private stopped = false;
  readonly answerWithinMs: number;
  private readonly between: (db: Database) => Promise<void>;
  private readonly holder: string;
  private readonly log: (message: string, err?: unknown) => void;

  constructor(
    private readonly deps: { db: Database; dialect: Dialect; storage: Storage },
    options: AccountRemovalOptions = {},
  ) {
    this.answerWithinMs = options.answerWithinMs ?? ANSWER_WITHIN_MS;
    this.between = options.between ?? letDiskCatchUp;
    this.holder = options.holder ?? PROCESS_HOLDER;
    this.log = options.log ?? ((message, err) => console.error(message, err ?? ''));
  }

  /**
   * Removes every marked account while this process holds the lease; resolves once none is left
   * (their first objects deleted too), or at once when another process holds it. Asked again
   * while it runs, it looks again before it ends: an account marked meanwhile is not left behind.
   */
  drain(): Promise<void> {
    this.again = true;
    this.running ??= this.run();
    return this.running;
  }

  /** Stops between two batches and gives the lease back (a process shutting down). */
  async stop(): Promise<void> {
    this.stopped = true;
    await this.running;
  }

  private async run(): Promise<void> {
    try {
      while (this.again && !this.stopped) {
        this.again = false;
        // Nothing marked (every start and period): no lease written. An account marked while
        // this looked has asked again (`again`), and is looked for once more.
        if ((await nextMarked(this.deps.db)) === null) continue;
        if (!(await takeLease(this.deps.db, LEASE, this.holder, nowSeconds(), LEASE_SECONDS))) return;
        try {
          if (!(await this.removeMarked())) return;
        } finally {
          await releaseLease(this.deps.db, LEASE, this.holder);
        }
      }
    } catch (err) {
      this.log('the account removals stopped on an error; the next run goes on', err);
    } finally {
      this.running = null;
    }
  }

  /**
   * The marked accounts, oldest mark first; false when paused midway. One whose removal fails is
   * left marked (hidden) for the next run, and the accounts marked after it go on meanwhile.
   */
  private async removeMarked(): Promise<boolean> {
    let removed = 0;
    const failed = new Set<string>();
    for (let id = await nextMarked(this.deps.db, failed); id !== null; id = await nextMarked(this.deps.db, failed)) {
      try {
        await deleteUser(this.deps.db, this.deps.dialect, id, async (db) => {
          await this.between(db);
          if (this.stopped || !(await renewLease(db, LEASE, this.holder, nowSeconds(), LEASE_SECONDS))) throw new RemovalPaused();
        });
      } catch (err) {
        if (err instanceof RemovalPaused) return false;
        failed.add(id);
        this.log(`removing account ${id} failed; it stays hidden and is tried again by the next run`, err);
        continue;
      }
      removed += 1;
    }
    if (removed > 0) await this.reclaim();
    return true;
  }

  /** The first objects before the answer, the rest in the background (files/doomed-bytes.ts). */
  private async reclaim(): Promise<void> {
    const pass = await reclaimDoomedBytes(this.deps, { limit: RECLAIMED_BEFORE_ANSWER, stopped: () => this.stopped });
    if (pass.failed > 0) this.log('the store refused to delete some bytes of a removed account; they are tried again later', pass.firstError);
    if (pass.more && !this.stopped) void reclaimInBackground(this.deps, this.log);
  }
}

/**
 * Signs the account out everywhere and hides it (see AccountRemovals); false when it is gone or
 * already marked. Its files leave this process's files host once committed (files-gone.ts): their
 * bytes stay until the removal's batches reach them.
 */
export async function markForRemoval(db: Database, userId: string, now = nowSeconds()): Promise<boolean> {
  const hidden = await db.transaction().execute(async (trx) => {
    const marked = await trx.updateTable('users').set({ removing_since: now }).where('id', '=', userId).where('removing_since', 'is', null).executeTakeFirst();
    if (Number(marked.numUpdatedRows) === 0) return false;
    await trx.deleteFrom('sessions').where('user_id', '=', userId).execute();
    await trx.deleteFrom('api_keys').where('user_id', '=', userId).execute();
    return true;
  });
  if (hidden) filesGone(db, { owner: userId });
  return hidden;
}

/** The account marked first, leaving out those whose removal failed in this run. */
async function nextMarked(db: Database, failed: ReadonlySet<string> = new Set()): Promise<string | null> {
  let q = db.selectFrom('users').select('id').where('removing_since', 'is not', null);
  if (failed.size > 0) q = q.where('id', 'not in', [...failed]);
  const row = await q.orderBy('removing_since').orderBy('id').limit(1).executeTakeFirst();
  return row?.id ?? null;
}

/** Whether `promise` settles within `ms`. */
export async function settlesWithin(promise: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
  try {
    return await Promise.race([promise.then(() => true), late]);
  } finally {
    clearTimeout(timer);
  }
}
