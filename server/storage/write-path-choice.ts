/** How an upload's bytes reach the disk: past the page cache (O_DIRECT) or through it. */
export type WritePath = 'direct' | 'cache';

/**
 * Writes of fewer bytes leave no sample: timer resolution, one sender's pause and the fixed
 * cost of opening and syncing would outweigh what the path costs per byte.
 */
export const SAMPLE_BYTES = 16 * 1024 * 1024;
/** Samples each path must have before the faster is chosen. */
export const SAMPLES_TO_CHOOSE = 2;
/** Samples kept per path; the fastest of these is its cost. */
const KEPT = 3;
/** A self-hoster hears of the choice when it is made and when it changes, no more often than this. */
const TELL_EVERY_MS = 60_000;
/** One pick in this many goes to the path not chosen, so its cost stays current. */
export const RETRY_EVERY = 16;
/** ...and one in this many when that path costs `FAR_DEARER` times the chosen one's or more: each try costs its share of a slower chunk. */
export const RETRY_FAR_EVERY = 64;
export const FAR_DEARER = 1.5;

/** A write's path and when it was picked: `done` times the write from then. */
export interface PathPick {
  readonly path: WritePath;
  readonly startedAt: number;
}

export interface PathCost {
  path: WritePath;
  /** Milliseconds per MiB, pick to durable end, of the fastest of the path's latest writes; null before any. */
  msPerMiB: number | null;
  samples: number;
}

/**
 * Issue 9, durable ingest at disk speed, where the disk path is the host's: on some of the
 * virtual machines Stash has been measured on, every new page-cache page costs what the host
 * charges to back it and O_DIRECT writes ingest 1.3–2.6 × faster; on others the disk's direct
 * writes are slow and the page cache wins 1.1–1.8 × (bench/README.md). A probe at start cannot
 * tell them apart (tens of MiB reuse pages just freed, and say nothing of an upload's stream of
 * new ones), so the choice is made from the uploads themselves: each write of `SAMPLE_BYTES` or
 * more is timed from its pick to its last byte durable, per MiB, and the path whose fastest
 * write of its latest `KEPT` went fastest takes the next writes.
 *
 * Why the whole write's time and not the time its disk path was waited on (the measure until
 * 2026-12-06): a direct write is waited on little (the next slot fills while one is written),
 * yet on one host what it cost showed as a slower stream all the same — 0.95 ms per MiB waited
 * on against the page cache's 2.23, and 376 MiB/s against 448 (bench/README.md). Only the
 * write's own pace says what the upload felt. A sender's pauses, and other uploads sharing the
 * disk, are in that pace too, which is why a path's cost is the fastest of its latest writes, not
 * their median: a phone on a slow link, or a crowd, moves a path's cost only when all of its
 * latest writes were slowed so.
 *
 * Until each path has `SAMPLES_TO_CHOOSE` samples the writes alternate (writes under way count,
 * so a burst of uploads at start tries both), and one pick in `RETRY_EVERY` goes to the other
 * path (one in `RETRY_FAR_EVERY` when it costs half as much again or more), so a host whose costs
 * change (page cache filling up, the disk busy elsewhere) is followed. Each try costs the time its
 * chunk takes longer: at most 3 % where the paths are within half again of each other, some 1.6 %
 * where one costs twice the other. One chooser per store, shared by every upload of the process.
 */
export class WritePathChoice {
  private readonly samples: Record<WritePath, number[]> = { direct: [], cache: [] };
  private readonly underWay: Record<WritePath, number> = { direct: 0, cache: 0 };
  private picks = 0;
  /** The path the log was last told of, and when: the choice itself may have moved since (told at most once a minute). */
  private toldPath: WritePath | null = null;
  private toldAt = -Infinity;

  /** `told` hears which path the writes take once the choice is made and when it changes (at most once a minute). */
  constructor(private readonly told: (chosen: WritePath, costs: PathCost[]) => void = () => {}) {}

  /** The path for a write starting now, timed from now on; every pick is ended by exactly one `done`. */
  pick(): PathPick {
    const path = this.next();
    this.underWay[path] += 1;
    return { path, startedAt: performance.now() };
  }

  /**
   * The write `pick` started has ended. `bytes`: what it made durable, for a write that ended
   * normally; a failed or aborted one, or one whose bytes took another path, says nothing.
   */
  done(pick: PathPick, bytes?: number): void {
    this.underWay[pick.path] -= 1;
    const ms = performance.now() - pick.startedAt;
    if (bytes === undefined || bytes < SAMPLE_BYTES || !(ms > 0)) return;
    const kept = this.samples[pick.path];
    kept.push(ms / (bytes / (1024 * 1024)));
    if (kept.length > KEPT) kept.shift();
  }

  /** What each path costs now (tests, and the log line when the choice is told). */
  costs(): PathCost[] {
    return (['direct', 'cache'] as const).map((path) => ({ path, msPerMiB: fastest(this.samples[path]), samples: this.samples[path].length }));
  }

  private next(): WritePath {
    const known = (path: WritePath) => this.samples[path].length + this.underWay[path];
    const direct = known('direct');
    const cache = known('cache');
    if (direct < SAMPLES_TO_CHOOSE || cache < SAMPLES_TO_CHOOSE) return direct < cache ? 'direct' : 'cache';
    const d = fastest(this.samples.direct);
    const c = fastest(this.samples.cache);
    // Samples still on their way: the path already measured (the page cache when neither is).
    if (d === null || c === null) return d === null ? 'cache' : 'direct';
    const best: WritePath = d <= c ? 'direct' : 'cache';
    if (best !== this.toldPath && performance.now() - this.toldAt >= TELL_EVERY_MS) {
      this.toldPath = best;
      this.toldAt = performance.now();
      this.told(best, this.costs());
    }
    const every = Math.max(d, c) >= FAR_DEARER * Math.min(d, c) ? RETRY_FAR_EVERY : RETRY_EVERY;
    this.picks += 1;
    if (this.picks % every === 0) return best === 'direct' ? 'cache' : 'direct';
    return best;
  }
}

function fastest(values: readonly number[]): number | null {
  return values.length === 0 ? null : Math.min(...values);
}

/** The log line for a choice made (LocalStorage passes it to the server's log). */
export function choiceMessage(chosen: WritePath, costs: PathCost[]): string {
  const cost = (path: WritePath) => costs.find((c) => c.path === path)?.msPerMiB?.toFixed(2) ?? '?';
  const other: WritePath = chosen === 'direct' ? 'cache' : 'direct';
  const name = (path: WritePath) => (path === 'direct' ? 'past the page cache (O_DIRECT)' : 'through the page cache');
  return `storage: uploads are written ${name(chosen)}: ${cost(chosen)} ms per MiB against ${cost(other)} ${name(other)} (STORAGE_DIRECT_WRITES=auto; =${chosen === 'direct'} fixes it)`;
}
