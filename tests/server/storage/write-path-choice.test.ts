import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { choiceMessage, RETRY_EVERY, RETRY_FAR_EVERY, SAMPLE_BYTES, WritePathChoice, type WritePath } from '../../../server/storage/write-path-choice.ts';

/**
 * Issue 9, STORAGE_DIRECT_WRITES=auto: each upload's write goes by the disk path this host's
 * uploads have gone faster by. What a self-hoster would notice going wrong: a host stuck on the
 * slower path (never trying the other, or never coming back to it once the host changed), or a
 * burst of uploads at start all sent down one path before anything was measured.
 */
const MiB = 1024 * 1024;

/** The clock the chooser times writes by: each test moves it. */
let now = 1_000_000;

/** A write of 80 MiB that took `cost[path]` ms for each MiB on the path it was given. */
function write(choice: WritePathChoice, cost: Record<WritePath, number>): WritePath {
  const pick = choice.pick();
  now += cost[pick.path] * 80;
  choice.done(pick, 80 * MiB);
  return pick.path;
}

describe('the write path chosen from what uploads cost', () => {
  beforeEach(() => {
    vi.spyOn(performance, 'now').mockImplementation(() => now);
  });
  afterEach(() => vi.restoreAllMocks());

  it('tries both paths twice first, then keeps to the faster, trying the other one write in RETRY_EVERY', () => {
    const choice = new WritePathChoice();
    const cost = { direct: 2, cache: 2.5 };
    const first = Array.from({ length: 4 }, () => write(choice, cost));
    expect(first.filter((p) => p === 'direct')).toHaveLength(2);
    expect(first.filter((p) => p === 'cache')).toHaveLength(2);
    const next = Array.from({ length: 2 * RETRY_EVERY }, () => write(choice, cost));
    expect(next.filter((p) => p === 'cache')).toHaveLength(2);
    expect(choice.costs()).toEqual([
      { path: 'direct', msPerMiB: 2, samples: 3 },
      { path: 'cache', msPerMiB: 2.5, samples: 3 },
    ]);

    // The same from the other side: a host whose page cache is the cheaper.
    const other = new WritePathChoice();
    const reversed = Array.from({ length: 4 + RETRY_EVERY }, () => write(other, { direct: 2.5, cache: 2 }));
    expect(reversed.slice(4).filter((p) => p === 'direct')).toHaveLength(1);
  });

  it('tries a path that costs half as much again or more only one write in RETRY_FAR_EVERY', () => {
    const choice = new WritePathChoice();
    const cost = { direct: 1.5, cache: 4 };
    for (let i = 0; i < 4; i++) write(choice, cost);
    const next = Array.from({ length: 2 * RETRY_FAR_EVERY }, () => write(choice, cost));
    expect(next.filter((p) => p === 'cache')).toHaveLength(2);
    expect(next.indexOf('cache')).toBe(RETRY_FAR_EVERY - 1);
  });

  it('follows a host whose costs change: the chosen path grown dear loses to the other path’s latest samples', () => {
    const choice = new WritePathChoice();
    for (let i = 0; i < 4; i++) write(choice, { direct: 3, cache: 1 });
    expect(write(choice, { direct: 3, cache: 1 })).toBe('cache');
    // New page-cache pages turned dear: three writes at 5 ms/MiB replace the old samples.
    const after = Array.from({ length: 3 * RETRY_EVERY }, () => write(choice, { direct: 3, cache: 5 }));
    const switchedAt = after.indexOf('direct');
    expect(switchedAt).toBe(3);
    expect(after.slice(switchedAt + 1).filter((p) => p === 'cache').length).toBeLessThanOrEqual(3);
  });

  it('spreads a burst of uploads started at once over both paths while none has been measured', () => {
    const choice = new WritePathChoice();
    const burst = Array.from({ length: 8 }, () => choice.pick());
    const paths = burst.map((p) => p.path);
    expect(paths.slice(0, 4).filter((p) => p === 'direct')).toHaveLength(2);
    expect(paths.slice(0, 4).filter((p) => p === 'cache')).toHaveLength(2);
    // The direct writes end after 80 ms, those through the page cache after 800.
    now += 80;
    for (const p of burst.filter((p) => p.path === 'direct')) choice.done(p, 80 * MiB);
    now += 720;
    for (const p of burst.filter((p) => p.path === 'cache')) choice.done(p, 80 * MiB);
    expect(choice.costs()).toEqual([
      { path: 'direct', msPerMiB: 1, samples: 2 },
      { path: 'cache', msPerMiB: 10, samples: 3 },
    ]);
    expect(write(choice, { direct: 1, cache: 10 })).toBe('direct');
  });

  it('learns nothing from small, failed or aborted writes', () => {
    const choice = new WritePathChoice();
    for (let i = 0; i < 10; i++) {
      const p = choice.pick();
      now += 10_000;
      // A 4 kB file, then a write that failed: neither says what a path costs per byte.
      choice.done(p, i % 2 === 0 ? SAMPLE_BYTES - 1 : undefined);
    }
    expect(choice.costs().map((c) => c.samples)).toEqual([0, 0]);
    // Still exploring: the next writes go on trying both.
    const next = [choice.pick().path, choice.pick().path].sort();
    expect(next).toEqual(['cache', 'direct']);
  });

  it('counts a sender’s pauses against a path only when they are all its latest writes had: its fastest of three is its cost', () => {
    const choice = new WritePathChoice();
    for (let i = 0; i < 4; i++) write(choice, { direct: 2, cache: 3 });
    // Two phones on a slow link land on the chosen path in a row: 40 ms per MiB, the sender's pace.
    expect(write(choice, { direct: 40, cache: 40 })).toBe('direct');
    expect(write(choice, { direct: 40, cache: 40 })).toBe('direct');
    expect(choice.costs()[0]).toEqual({ path: 'direct', msPerMiB: 2, samples: 3 });
    expect(write(choice, { direct: 2, cache: 3 })).toBe('direct');
    // A third in a row, and nothing of the path's own pace is left among its latest writes.
    for (let i = 0; i < 3; i++) write(choice, { direct: 40, cache: 40 });
    expect(choice.pick().path).toBe('cache');
  });

  it('times a write from its pick to its end: every moment the upload waited counts, whatever held it', () => {
    const choice = new WritePathChoice();
    const pick = choice.pick();
    now += 160;
    choice.done(pick, 32 * MiB);
    expect(choice.costs().find((c) => c.path === pick.path)).toEqual({ path: pick.path, msPerMiB: 5, samples: 1 });
  });

  it('tells the log which path it took, and a change of path at most once a minute', () => {
    const told: string[] = [];
    const choice = new WritePathChoice((chosen, costs) => told.push(choiceMessage(chosen, costs)));
    for (let i = 0; i < 5; i++) write(choice, { direct: 1.5, cache: 4 });
    expect(told).toEqual(['storage: uploads are written past the page cache (O_DIRECT): 1.50 ms per MiB against 4.00 through the page cache (STORAGE_DIRECT_WRITES=auto; =true fixes it)']);
    // Direct writes grown dear: the switch happens at once, the log hears of it once a minute has passed.
    for (let i = 0; i < 3; i++) write(choice, { direct: 9, cache: 4 });
    expect(choice.pick().path).toBe('cache');
    expect(told).toHaveLength(1);
    now += 60_000;
    expect(choice.pick().path).toBe('cache');
    expect(told[1]).toBe('storage: uploads are written through the page cache: 4.00 ms per MiB against 9.00 past the page cache (O_DIRECT) (STORAGE_DIRECT_WRITES=auto; =false fixes it)');
  });
});
