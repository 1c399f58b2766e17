import type { Database } from '../../db/index.ts';
import { PREVIEWABLE_TYPES } from './previews.ts';

export interface PreviewSource {
  id: string;
  storage_key: string;
  mime_type: string;
  size: number;
  previews: string | null;
}

export async function findPreviewSource(db: Database, id: string): Promise<PreviewSource | undefined> {
  const row = await db.selectFrom('files').select(['id', 'storage_key', 'mime_type', 'size', 'previews']).where('id', '=', id).executeTakeFirst();
  return row ? { ...row, size: Number(row.size), previews: row.previews ?? null } : undefined;
}

/**
 * Records the previews once: only a row still without a record takes it, so a file deleted
 * (or rendered by another process) meanwhile answers false and the caller drops its keys.
 */
export async function recordPreviews(db: Database, id: string, column: string): Promise<boolean> {
  const res = await db.updateTable('files').set({ previews: column }).where('id', '=', id).where('previews', 'is', null).executeTakeFirst();
  return Number(res.numUpdatedRows) === 1;
}

/** Ids of files that may still need previews, after `afterId` in id order (the start-up backfill). */
export async function filesWithoutPreviews(db: Database, afterId: string, limit: number): Promise<string[]> {
  const rows = await filesWithoutPreviewsQuery(db, afterId, limit).execute();
  return rows.map((r) => r.id);
}

/** Read from the partial index files_previews_pending (migration 2026-12-01-10), not the whole table. */
export function filesWithoutPreviewsQuery(db: Database, afterId: string, limit: number) {
  return db.selectFrom('files').select('id').where('previews', 'is', null).where('mime_type', 'in', PREVIEWABLE_TYPES).where('id', '>', afterId).orderBy('id').limit(limit);
}
