import type { UploadStore } from '../store/upload-store.ts';
import type { UploadRecord } from '../store/schema.ts';
import { fileSource, type ChunkSource } from './chunk-source.ts';

export interface MemoryUpload {
  record: UploadRecord;
  file: Blob;
  source: ChunkSource;
}

/**
 * Where the queue's uploads live: IndexedDB (persistent, shared by every context) or this
 * context's memory (storage short: sent straight from the File, lost on reload).
 */
export class RecordBook {
  readonly memory = new Map<string, MemoryUpload>();

  /** `changed` runs after every change made through the book. */
  constructor(
    readonly store: UploadStore | null,
    private readonly changed: () => void,
  ) {}

  async get(id: string): Promise<UploadRecord | undefined> {
    return this.memory.get(id)?.record ?? (await this.store?.get(id));
  }

  async update(id: string, change: (r: UploadRecord) => UploadRecord): Promise<UploadRecord | undefined> {
    const m = this.memory.get(id);
    let next: UploadRecord | undefined;
    if (m) {
      next = change(m.record);
      m.record = next;
    } else {
      next = await this.store?.update(id, change);
    }
    this.changed();
    return next;
  }

  /** Every upload with whether it survives a reload. */
  async all(): Promise<{ record: UploadRecord; persistent: boolean }[]> {
    const stored = this.store ? await this.store.list() : [];
    return [...stored.map((record) => ({ record, persistent: true })), ...[...this.memory.values()].map((m) => ({ record: m.record, persistent: false }))];
  }

  keepInMemory(record: UploadRecord, file: Blob): void {
    this.memory.set(record.id, { record, file, source: fileSource(file, record.chunkSize) });
  }

  isInMemory(id: string): boolean {
    return this.memory.has(id);
  }

  async remove(id: string): Promise<void> {
    if (!this.memory.delete(id)) await this.store?.remove(id);
    this.changed();
  }
}
