import type { Database } from '../../db/index.ts';
import type { UploadsTable } from '../../db/schema.ts';

export type UploadRow = UploadsTable;

export interface ChunkState {
  chunkIndex: number;
  bytes: number;
  complete: boolean;
}

export async function findUpload(db: Database, id: string): Promise<UploadRow | undefined> {
  return db.selectFrom('uploads').selectAll().where('id', '=', id).executeTakeFirst();
}

/** Inserts the upload unless another request did so first; returns the row that won. */
export async function createUpload(db: Database, row: UploadRow): Promise<UploadRow> {
  await db
    .insertInto('uploads')
    .values(row)
    .onConflict((oc) => oc.column('id').doNothing())
    .execute();
  const stored = await findUpload(db, row.id);
  if (!stored) throw new Error('upload row vanished right after insert');
  return stored;
}

/** Design §7: an upload lives 24 h after its last activity. */
export async function touchUpload(db: Database, id: string, now: number, expiresAt: number): Promise<void> {
  await db.updateTable('uploads').set({ updated_at: now, expires_at: expiresAt }).where('id', '=', id).execute();
}

export async function listChunks(db: Database, uploadId: string): Promise<ChunkState[]> {
  const rows = await db
    .selectFrom('upload_chunks')
    .select(['chunk_index', 'bytes', 'complete'])
    .where('upload_id', '=', uploadId)
    .orderBy('chunk_index')
    .execute();
  return rows.map((r) => ({ chunkIndex: r.chunk_index, bytes: Number(r.bytes), complete: r.complete === 1 }));
}

export async function findChunk(db: Database, uploadId: string, chunkIndex: number): Promise<ChunkState | undefined> {
  return (await listChunks(db, uploadId)).find((c) => c.chunkIndex === chunkIndex);
}

/** Records how many bytes of a chunk are stored and whether it is whole (upsert). */
export async function saveChunk(
  db: Database,
  uploadId: string,
  chunkIndex: number,
  bytes: number,
  complete: boolean,
  sha256: string | null,
): Promise<void> {
  await db
    .insertInto('upload_chunks')
    .values({ upload_id: uploadId, chunk_index: chunkIndex, bytes, complete: complete ? 1 : 0, sha256 })
    .onConflict((oc) => oc.columns(['upload_id', 'chunk_index']).doUpdateSet({ bytes, complete: complete ? 1 : 0, sha256 }))
    .execute();
}

/**
 * Removes the upload row (its chunks cascade). Resolves true only for the one caller that
 * removed it, so of two requests finishing an upload at once exactly one finalizes it.
 */
export async function claimUpload(db: Database, id: string, olderThan?: number): Promise<boolean> {
  let q = db.deleteFrom('uploads').where('id', '=', id);
  if (olderThan !== undefined) q = q.where('expires_at', '<', olderThan);
  const res = await q.executeTakeFirst();
  return Number(res.numDeletedRows) === 1;
}

export async function listExpiredUploads(db: Database, now: number, limit: number): Promise<Pick<UploadRow, 'id' | 'storage_key'>[]> {
  return db.selectFrom('uploads').select(['id', 'storage_key']).where('expires_at', '<', now).orderBy('expires_at').limit(limit).execute();
}
