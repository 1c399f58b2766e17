import { openDB, type IDBPDatabase, type IDBPObjectStore, type StoreNames } from 'idb';
import { UPLOAD_DB_NAME, UPLOAD_DB_VERSION, type AuthRecord, type ChunkRecord, type OwnerRecord, type UploadDb, type UploadRecord } from './schema.ts';

/**
 * The IndexedDB queue shared by the upload worker (which sends) and the service worker (which
 * accepts shared files). Every function is a small transaction, so two tabs, a worker and the
 * service worker can use it at once.
 */
export class UploadStore {
  private constructor(private readonly db: IDBPDatabase<UploadDb>) {}

  static async open(name = UPLOAD_DB_NAME): Promise<UploadStore> {
    const db = await openDB<UploadDb>(name, UPLOAD_DB_VERSION, {
      upgrade(database) {
        database.createObjectStore('uploads', { keyPath: 'id' });
        const chunks = database.createObjectStore('chunks', { keyPath: ['uploadId', 'index'] });
        chunks.createIndex('byUpload', 'uploadId');
        database.createObjectStore('meta');
      },
      // Another context upgraded the schema: let go so it can proceed.
      blocking() {
        db.close();
      },
    });
    return new UploadStore(db);
  }

  close(): void {
    this.db.close();
  }

  async list(): Promise<UploadRecord[]> {
    const all = await this.db.getAll('uploads');
    return all.sort((a, b) => a.createdAt - b.createdAt || a.id.localeCompare(b.id));
  }

  get(id: string): Promise<UploadRecord | undefined> {
    return this.db.get('uploads', id);
  }

  async put(record: UploadRecord): Promise<void> {
    await this.db.put('uploads', record);
  }

  /** Several uploads in one transaction: every one of them is queued, or none (a share). */
  async putAll(records: UploadRecord[]): Promise<void> {
    const tx = this.db.transaction('uploads', 'readwrite');
    await Promise.all([...records.map((record) => tx.store.put(record)), tx.done]);
  }

  /**
   * Read-modify-write in one transaction, so a pause from one tab and an acknowledgement
   * recorded by another never overwrite each other. Returns undefined when the upload is gone.
   */
  async update(id: string, change: (record: UploadRecord) => UploadRecord): Promise<UploadRecord | undefined> {
    const tx = this.db.transaction('uploads', 'readwrite');
    const current = await tx.store.get(id);
    if (!current) {
      await tx.done;
      return undefined;
    }
    const next = change(current);
    await tx.store.put(next);
    await tx.done;
    return next;
  }

  async putChunk(chunk: ChunkRecord): Promise<void> {
    await this.db.put('chunks', chunk);
  }

  getChunk(uploadId: string, index: number): Promise<ChunkRecord | undefined> {
    return this.db.get('chunks', [uploadId, index]);
  }

  async deleteChunk(uploadId: string, index: number): Promise<void> {
    await this.db.delete('chunks', [uploadId, index]);
  }

  async chunkIndexes(uploadId: string): Promise<number[]> {
    const keys = await this.db.getAllKeysFromIndex('chunks', 'byUpload', uploadId);
    return keys.map((k) => k[1]).sort((a, b) => a - b);
  }

  /** Every upload id some chunk is stored for, whether or not its record is. */
  async chunkOwners(): Promise<string[]> {
    const keys = await this.db.getAllKeys('chunks');
    return [...new Set(keys.map((k) => k[0]))];
  }

  /** Drops every chunk an upload still holds (it is done), keeping its record. */
  async removeChunks(id: string): Promise<void> {
    const tx = this.db.transaction('chunks', 'readwrite');
    await deleteChunksOf(tx.store, id);
    await tx.done;
  }

  /** Drops the upload and every chunk it still holds. */
  async remove(id: string): Promise<void> {
    const tx = this.db.transaction(['uploads', 'chunks'], 'readwrite');
    await tx.objectStore('uploads').delete(id);
    await deleteChunksOf(tx.objectStore('chunks'), id);
    await tx.done;
  }

  async getAuth(): Promise<AuthRecord | undefined> {
    return (await this.db.get('meta', 'auth')) as AuthRecord | undefined;
  }

  async setAuth(auth: AuthRecord): Promise<void> {
    await this.db.put('meta', auth, 'auth');
  }

  async getOwner(tokenHash: string): Promise<string | undefined> {
    return ((await this.db.get('meta', `owner:${tokenHash}`)) as OwnerRecord | undefined)?.userId;
  }

  async setOwner(tokenHash: string, userId: string): Promise<void> {
    await this.db.put('meta', { userId }, `owner:${tokenHash}`);
  }
}

/** Deletes every chunk of upload `id` inside the caller's transaction. */
async function deleteChunksOf(chunks: IDBPObjectStore<UploadDb, ArrayLike<StoreNames<UploadDb>>, 'chunks', 'readwrite'>, id: string): Promise<void> {
  for (const key of await chunks.index('byUpload').getAllKeys(id)) await chunks.delete(key);
}
