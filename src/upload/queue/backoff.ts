export interface BackoffOptions {
  baseMs: number;
  maxMs: number;
}

export const DEFAULT_BACKOFF: BackoffOptions = { baseMs: 1000, maxMs: 60_000 };

/**
 * Exponential backoff with "equal jitter": half of the capped exponential step is fixed, the
 * other half random, so many clients coming back after an outage spread out without ever
 * retrying in a tight loop. `attempt` counts failures since the last progress (issue 5: reset
 * after progress).
 */
export function backoffDelay(attempt: number, options: BackoffOptions = DEFAULT_BACKOFF, random: () => number = Math.random): number {
  const step = Math.min(options.maxMs, options.baseMs * 2 ** Math.min(attempt, 30));
  return Math.round(step / 2 + random() * (step / 2));
}
