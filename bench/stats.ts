import { spawnSync } from 'node:child_process';

export function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[i] ?? 0;
}

export const MB = 1_048_576;
export const mbps = (bytes: number, ms: number) => `${(bytes / MB / (ms / 1000)).toFixed(0)} MB/s`;
export const mib = (bytes: number) => `${(bytes / MB).toFixed(0)} MiB`;
export const ms = (v: number) => (v < 1 ? `${(v * 1000).toFixed(0)} µs` : `${v.toFixed(1)} ms`);

export interface Row {
  /** Stash median / anchor median, where the figures compare. */
  ratio?: string;
  benchmark: string;
  stash: string;
  baseline: string;
  baselineName: string;
  note?: string;
}

export const median = (values: number[]) => percentile(values, 50);
export const min = (values: number[]) => Math.min(...values);

/**
 * Runs each contender once per round, in turn (A, B, A, B…), so drift in the machine's load
 * falls on all of them alike; returns every contender's samples. Each starts with nothing left
 * dirty in the page cache: the tus server and the S3 emulator do not sync what they store, and
 * the kernel writing their gigabyte back some 30 s later landed in the middle of whoever ran
 * then (an upload into Stash at 255-300 MiB/s in such a round, 500 in the others).
 */
export async function interleave(contenders: Record<string, () => Promise<number>>, rounds: number): Promise<Record<string, number[]>> {
  const out: Record<string, number[]> = Object.fromEntries(Object.keys(contenders).map((k) => [k, []]));
  for (let r = 0; r < rounds; r++) {
    for (const [name, run] of Object.entries(contenders)) {
      spawnSync('sync');
      out[name]!.push(await run());
    }
  }
  return out;
}

/** "min a, median b" of throughput samples in MiB/s. */
export const rateSummary = (samples: number[]) => `${median(samples).toFixed(0)} MiB/s (best ${Math.max(...samples).toFixed(0)})`;
export const timeSummary = (samples: number[]) => `median ${ms(median(samples))} (min ${ms(min(samples))})`;
export const ratio = (a: number[], b: number[]) => `${(median(a) / median(b)).toFixed(2)} ×`;
