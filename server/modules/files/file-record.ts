import type { FileRecord } from '../../../contract/files.ts';
import type { FilesTable } from '../../db/schema.ts';
import { previewsForClient } from '../media/previews.ts';

/** Spec §3 File as clients see it; `url` is FILES_URL/actual_name (design §7). */
export function toFileRecord(row: FilesTable, username: string, filesUrl: string): FileRecord {
  return {
    url: `${filesUrl}/${row.actual_name}`,
    actual_name: row.actual_name,
    original_name: row.original_name,
    username,
    size: Number(row.size),
    time_created: Number(row.time_created),
    width: row.width,
    height: row.height,
    mime_type: row.mime_type,
    previews: previewsForClient(row.previews, row.actual_name, filesUrl),
  };
}
