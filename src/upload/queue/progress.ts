import type { UploadItem } from '../uploader.ts';

/**
 * What the bar shows beyond acknowledged bytes: the chunk in flight (sent, never counted as
 * done), and never less than it showed before (issue 11 item 4: progress never moves back,
 * also when a chunk in flight is lost or a cancel is undone).
 */
export class ProgressView {
  private readonly inFlight = new Map<string, number>();
  private readonly shown = new Map<string, number>();
  private lastEmit = 0;

  /** `emit` tells listeners; upload progress events come many times a second, listeners hear ~4. */
  constructor(private readonly emit: () => void) {}

  sent(id: string, bytes: number): void {
    this.inFlight.set(id, bytes);
    const now = Date.now();
    if (now - this.lastEmit < 250) return;
    this.lastEmit = now;
    this.emit();
  }

  /** The request in flight ended (answered or lost). */
  settled(id: string): void {
    this.inFlight.delete(id);
  }

  forget(id: string): void {
    this.inFlight.delete(id);
    this.shown.delete(id);
  }

  apply(item: UploadItem): UploadItem {
    if (item.state === 'done') {
      this.forget(item.id);
      return item;
    }
    const bytes = Math.max(this.shown.get(item.id) ?? 0, item.ackedBytes + (this.inFlight.get(item.id) ?? 0));
    this.shown.set(item.id, bytes);
    return bytes > item.ackedBytes ? { ...item, sentBytes: bytes - item.ackedBytes } : item;
  }
}
