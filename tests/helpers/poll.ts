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
