import type { ChildProcess } from 'node:child_process';

/**
 * Waits until `url` answers anything at all, every 100 ms for 10 s, for a process just spawned:
 * fails at once if it exits meanwhile, and `detail()` (its log, say) goes into either failure.
 */
export async function untilAnswers(url: string, child: ChildProcess, detail: () => string = () => ''): Promise<void> {
  for (let i = 0; ; i++) {
    if (child.exitCode !== null) throw new Error(`${url}: exited with ${child.exitCode} ${detail()}`);
    try {
      await fetch(url);
      return;
    } catch {
      if (i >= 100) throw new Error(`${url} never answered ${detail()}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

/**
 * Polls `probe` until `ok` holds or `timeoutMs` passes, and returns the last value either way, so
 * the caller's assertion on it says what was seen (a test waits for the state it needs, never for
 * a fixed time).
 */
export async function until<T>(probe: () => Promise<T>, ok: (v: T) => boolean, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (ok(v) || Date.now() > deadline) return v;
    await new Promise((r) => setTimeout(r, 25));
  }
}
