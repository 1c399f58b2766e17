/**
 * Issue 11 item 4: a cancelled upload stays (as 'cancelled', with Undo) for `undoMs` after the
 * cancel, then `expire` drops it. A cancel left by a closed page is scheduled again by the next
 * start from its stored time.
 */
export class CancelTimers {
  private readonly timers = new Map<string, ReturnType<typeof setTimeout>>();

  constructor(
    private readonly undoMs: number,
    private readonly expire: (id: string) => Promise<void>,
  ) {}

  schedule(id: string, cancelledAt: number): void {
    this.clear(id);
    const timer = setTimeout(() => {
      this.timers.delete(id);
      void this.expire(id);
    }, Math.max(0, cancelledAt + this.undoMs - Date.now()));
    this.timers.set(id, timer);
  }

  clear(id: string): void {
    clearTimeout(this.timers.get(id));
    this.timers.delete(id);
  }

  clearAll(): void {
    for (const timer of this.timers.values()) clearTimeout(timer);
    this.timers.clear();
  }
}
