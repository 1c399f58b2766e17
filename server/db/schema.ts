import type { Generated } from 'kysely';

/**
 * Table types. Booleans are stored as 0/1 integers and times as integer seconds on both
 * dialects, so one query layer reads the same values from SQLite and PostgreSQL.
 */
export interface RolesTable {
  id: string;
  name: string;
  invites_allowed: number;
}

export interface UsersTable {
  id: string;
  username: string;
  /** Lower-cased copy: usernames are unique without regard to case (design §6). */
  username_lower: string;
  password_hash: string;
  role: string;
  banned: number;
  time_created: number;
  /** Set when an admin removes the account; the row goes once its files have (users/account-removals.ts). */
  removing_since?: number | null;
}

export interface SessionsTable {
  id: string;
  user_id: string;
  /** SHA-256 of the opaque token: a leaked database does not leak live sessions. */
  token_hash: string;
  created_at: number;
  last_used_at: number;
}

export interface ApiKeysTable {
  id: string;
  user_id: string;
  /** Kept readable: the owner downloads it inside the ShareX config (design §9). */
  key: string;
  created_at: number;
}

export interface InvitesTable {
  id: string;
  invite_key: string;
  created_by: string | null;
  claimed: number;
  claimed_by: string | null;
  created_at: number;
  claimed_at: number | null;
  /** Soft delete: a deleted key can no longer be claimed but still counts toward the weekly limit. */
  deleted_at: number | null;
}

export interface SettingsTable {
  key: string;
  value: string;
}

export interface MimeTypesTable {
  mime: string;
}

export interface FilesTable {
  id: string;
  actual_name: string;
  original_name: string;
  user_id: string;
  size: number;
  mime_type: string;
  width: number | null;
  height: number | null;
  time_created: number;
  storage_key: string;
  sha256: string | null;
  /** JSON list of stored WebP previews (server/modules/media/previews.ts); NULL until they are made. */
  previews?: string | null;
}

/** Files per owner, kept by triggers (migration 2026-11-22-20): the pager's count. */
export interface FileCountsTable {
  user_id: string;
  file_count: number;
  /** Grows with every insert, delete and sort-key update of the owner's files (migration 2026-11-25-10). */
  changes: Generated<number>;
}

/** One row (id 1): files on the site, kept by the same triggers. */
export interface FileTotalsTable {
  id: number;
  file_count: number;
  /** Grows with every insert, delete and sort-key update of any file (migration 2026-11-25-10). */
  changes: Generated<number>;
}

/** The last inserts and deletes of files, written by the counting triggers (migration 2026-11-29-10), for the list anchors. */
export interface FileListLogTable {
  /** The site's `file_totals.changes` after this change. */
  changes: number;
  user_id: string;
  /** The owner's `file_counts.changes` after this change; null when the owner's row was gone. */
  user_changes: number | null;
  file_id: string;
  size: number;
  time_created: number;
  /** 1: the file came; −1: it went. */
  delta: number;
  /** The file's names (migration 2026-12-03-10); null in entries logged before it. */
  original_name: string | null;
  actual_name: string | null;
}

/** The anchors of a list's last walk, for other processes to carry forward (migration 2026-11-29-10). */
export interface FileListAnchorsTable {
  /** `<owner id>:<sort>`, or `*:<sort>` for every file. */
  list: string;
  user_id: string | null;
  /** The list's counter the anchors were read at. */
  changes: number;
  /** JSON: [[sort key, id, place], …] in list order. */
  anchors: string;
}

/** A name filter's count of a large list, for every process to carry forward (migration 2026-12-03-11). */
export interface FileNameCountsTable {
  /** files/name-counts.ts countKey: the owner (or null: every file) and the lower-cased needles. */
  key: string;
  user_id: string | null;
  /** The list's counter read by the statement that counted. */
  changes: number;
  total: number;
  /** 1: SQLite read the page from the trigram table (files/sqlite-name-plan.ts). */
  via_trigrams: number;
  /** Date.now() when kept: the oldest are pruned. */
  kept_at: number;
}

/**
 * SQLite only: the FTS5 trigram index of file names (migration 2026-11-22-21), queried with
 * `files_names match …`; PostgreSQL indexes the same filters with pg_trgm instead.
 */
export interface FilesNamesTable {
  original_name: string;
  actual_name: string;
}

export interface UploadsTable {
  /** The client's uploadId, or a key derived from user + name + totalChunks (design §7). */
  id: string;
  user_id: string;
  original_name: string;
  total_chunks: number;
  file_size: number | null;
  storage_key: string;
  created_at: number;
  updated_at: number;
  expires_at: number;
  /** While a request turns the upload into a listed file: when its claim lapses (ms since the epoch). */
  finishing_until?: number | null;
}

export interface UploadChunksTable {
  upload_id: string;
  chunk_index: number;
  /** Bytes of this chunk already stored (a chunk cut off midway keeps what arrived). */
  bytes: number;
  complete: number;
  sha256: string | null;
  /** The request holding this chunk's write lease (design §7: one writer per chunk), or null. */
  writer: string | null;
  /** When that lease lapses, in milliseconds since the epoch; a lapsed lease can be taken over. */
  lease_until: number | null;
}

/** A background job's lease (issue 10: a sweep runs once across the deployment per period). */
export interface JobLeasesTable {
  name: string;
  holder: string;
  expires_at: number;
}

/** An upload cancelled by its owner, remembered until it would have expired (design §7). */
export interface CancelledUploadsTable {
  id: string;
  expires_at: number;
}

/** An upload a client named by its uploadId, remembered once finished (design §7: sent again, harmless). */
export interface FinishedUploadsTable {
  id: string;
  file_id: string;
  total_chunks: number;
  expires_at: number;
}

/** Bytes whose rows are gone, until the store has deleted them (files/doomed-bytes.ts). */
export interface DoomedBytesTable {
  storage_key: string;
  /** The deleted file's previews (JSON, as files.previews), whose objects go with it; null for an upload. */
  previews: string | null;
  kind: 'file' | 'upload';
  doomed_at: number;
}

export interface DB {
  roles: RolesTable;
  users: UsersTable;
  sessions: SessionsTable;
  api_keys: ApiKeysTable;
  invites: InvitesTable;
  settings: SettingsTable;
  mime_types: MimeTypesTable;
  files: FilesTable;
  file_counts: FileCountsTable;
  file_totals: FileTotalsTable;
  file_list_log: FileListLogTable;
  file_list_anchors: FileListAnchorsTable;
  file_name_counts: FileNameCountsTable;
  files_names: FilesNamesTable;
  uploads: UploadsTable;
  upload_chunks: UploadChunksTable;
  job_leases: JobLeasesTable;
  cancelled_uploads: CancelledUploadsTable;
  finished_uploads: FinishedUploadsTable;
  doomed_bytes: DoomedBytesTable;
}

export type { Generated };
