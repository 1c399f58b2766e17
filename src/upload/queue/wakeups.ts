/**
 * The queue's two kinds of waiting: for any change (a chunk written, a new upload, a pause,
 * another context's broadcast, or a poll timeout since other contexts may be silent), and a
 * backoff pause that only `wakeAll()` (online again, a resume) or an abort cuts short, so other
 * uploads' progress cannot turn a backoff into a tight loop.
 */
export class Wakeups {
  private waiters = new Set<() => void>();
  private sleepers = new Set<() => void>();

  constructor(private readonly pollMs: number) {}

  /** Something changed: everyone waiting for a change looks again. */
  notify(): void {
    const waiters = this.waiters;
    this.waiters = new Set();
    for (const resolve of waiters) resolve();
  }

  /** Cuts every wait short, backoffs included. */
  wakeAll(): void {
    const sleepers = this.sleepers;
    this.sleepers = new Set();
    for (const resolve of sleepers) resolve();
    this.notify();
  }

  /** Resolves on the next change or poll; rejects with AbortError when already aborted. */
  change(signal: AbortSignal): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      if (signal.aborted) {
        reject(new DOMException('Aborted', 'AbortError'));
        return;
      }
      const done = () => {
        clearTimeout(timer);
        signal.removeEventListener('abort', done);
        this.waiters.delete(done);
        resolve();
      };
      const timer = setTimeout(done, this.pollMs);
      signal.addEventListener('abort', done);
      this.waiters.add(done);
    });
  }

  sleep(ms: number, signal: AbortSignal): Promise<void> {
    return new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        signal.removeEventListener('abort', done);
        this.sleepers.delete(done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      signal.addEventListener('abort', done);
      this.sleepers.add(done);
    });
  }
}
