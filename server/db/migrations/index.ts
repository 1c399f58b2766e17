import type { Migration } from 'kysely';
import * as initial from './2026-11-21-001-initial.ts';
import * as fileListIndexes from './2026-11-21-002-file-list-indexes.ts';
import * as chunkLeases from './2026-11-22-10-chunk-leases.ts';
import * as fileListCounters from './2026-11-22-20-file-list-counters.ts';
import * as fileListSortIndexes from './2026-11-22-21-file-list-indexes.ts';
import * as previews from './2026-11-22-30-previews.ts';
import * as jobLeases from './2026-11-22-40-job-leases.ts';
import * as cancelledUploads from './2026-11-22-41-cancelled-uploads.ts';
import * as fileListChanges from './2026-11-25-10-file-list-changes.ts';
import * as fileListLog from './2026-11-29-10-file-list-log.ts';
import * as pendingWorkIndexes from './2026-12-01-10-pending-work-indexes.ts';
import * as fileListLogNames from './2026-12-03-10-file-list-log-names.ts';
import * as fileNameCounts from './2026-12-03-11-file-name-counts.ts';
import * as doomedBytes from './2026-12-03-20-doomed-bytes.ts';
import * as fileNamesRowids from './2026-12-03-21-file-names-rowids.ts';
import * as fileDeletesPerStatement from './2026-12-04-10-file-deletes-per-statement.ts';
import * as doomedBytesByKey from './2026-12-04-20-doomed-bytes-by-key.ts';
import * as accountsBeingRemoved from './2026-12-04-30-accounts-being-removed.ts';
import * as finishedUploads from './2026-12-05-10-finished-uploads.ts';

/**
 * Migrations in the order they run; names sort by date. Listed statically (not read from disk)
 * so they survive bundling and run the same from tsx and tests.
 */
export const migrations: Record<string, Migration> = {
  '2026-11-21-001-initial': initial,
  '2026-11-21-002-file-list-indexes': fileListIndexes,
  '2026-11-22-10-chunk-leases': chunkLeases,
  '2026-11-22-20-file-list-counters': fileListCounters,
  '2026-11-22-21-file-list-indexes': fileListSortIndexes,
  '2026-11-22-30-previews': previews,
  '2026-11-22-40-job-leases': jobLeases,
  '2026-11-22-41-cancelled-uploads': cancelledUploads,
  '2026-11-25-10-file-list-changes': fileListChanges,
  '2026-11-29-10-file-list-log': fileListLog,
  '2026-12-01-10-pending-work-indexes': pendingWorkIndexes,
  '2026-12-03-10-file-list-log-names': fileListLogNames,
  '2026-12-03-11-file-name-counts': fileNameCounts,
  '2026-12-03-20-doomed-bytes': doomedBytes,
  '2026-12-03-21-file-names-rowids': fileNamesRowids,
  '2026-12-04-10-file-deletes-per-statement': fileDeletesPerStatement,
  '2026-12-04-20-doomed-bytes-by-key': doomedBytesByKey,
  '2026-12-04-30-accounts-being-removed': accountsBeingRemoved,
  '2026-12-05-10-finished-uploads': finishedUploads,
};
