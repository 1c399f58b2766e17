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
  benchmark: string;
  stash: string;
  baseline: string;
  baselineName: string;
  note?: string;
}
