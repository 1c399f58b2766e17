import type { Database, Dialect } from '../../db/index.ts';
import type { FilesTable, UploadsTable } from '../../db/schema.ts';
import { lockUser } from '../users/users.repository.ts';
import { insertFile } from './files.repository.ts';

export type UploadRow = UploadsTable;

export interface ChunkState {
  chunkIndex: number;
  bytes: number;
  complete: boolean;
  sha256: string | null;
  /** The request holding the chunk's write lease and when it lapses (ms), or null. */
  writer: string | null;
  leaseUntil: number | null;
}

export async function findUpload(db: Database, id: string): Promise<UploadRow | undefined> {
  return db.selectFrom('uploads').selectAll().where('id', '=', id).executeTakeFirst();
}

/** Design §7: an upload lives 24 h after its last activity. */
export async function touchUpload(db: Database, id: string, now: number, expiresAt: number): Promise<void> {
  await db.updateTable('uploads').set({ updated_at: now, expires_at: expiresAt }).where('id', '=', id).execute();
}

export async function listChunks(db: Database, uploadId: string): Promise<ChunkState[]> {
  const rows = await db
    .selectFrom('upload_chunks')
    .select(['chunk_index', 'bytes', 'complete', 'sha256', 'writer', 'lease_until'])
    .where('upload_id', '=', uploadId)
    .orderBy('chunk_index')
    .execute();
  return rows.map((r) => ({
    chunkIndex: r.chunk_index,
    bytes: Number(r.bytes),
    complete: r.complete === 1,
    sha256: r.sha256,
    writer: r.writer,
    leaseUntil: r.lease_until === null ? null : Number(r.lease_until),
  }));
}

/**
 * A chunk no request has touched yet, made with `writer`'s lease already on it: one statement
 * where making the row, reading it back and taking its lease were three (a new chunk is the
 * common case, once per chunk of every upload; on PostgreSQL each write was a commit of its
 * own). 'exists' when the row was there already: its lease is then taken the compare-and-set way
 * (takeChunkLease). 'gone' when the upload row is, as the foreign key reports.
 */
export async function createLeasedChunk(db: Database, uploadId: string, chunkIndex: number, writer: string, untilMs: number): Promise<'created' | 'exists' | 'gone'> {
  try {
    const made = await db
      .insertInto('upload_chunks')
      .values({ upload_id: uploadId, chunk_index: chunkIndex, bytes: 0, complete: 0, sha256: null, writer, lease_until: untilMs })
      .onConflict((oc) => oc.columns(['upload_id', 'chunk_index']).doNothing())
      .returning('chunk_index')
      .executeTakeFirst();
    return made ? 'created' : 'exists';
  } catch (err) {
    if (isForeignKeyError(err)) return 'gone';
    throw err;
  }
}

function isForeignKeyError(err: unknown): boolean {
  const code = (err as { code?: unknown }).code;
  return code === '23503' || code === 'SQLITE_CONSTRAINT_FOREIGNKEY';
}

/**
 * Compare-and-set (design §7, one writer per chunk): `writer` takes the chunk's lease only if the
 * chunk is not complete and nobody holds a live lease on it.
 */
export async function takeChunkLease(db: Database, uploadId: string, chunkIndex: number, writer: string, nowMs: number, untilMs: number): Promise<boolean> {
  const res = await db
    .updateTable('upload_chunks')
    .set({ writer, lease_until: untilMs })
    .where('upload_id', '=', uploadId)
    .where('chunk_index', '=', chunkIndex)
    .where('complete', '=', 0)
    .where((eb) => eb.or([eb('writer', 'is', null), eb('lease_until', '<', nowMs)]))
    .executeTakeFirst();
  return Number(res.numUpdatedRows) === 1;
}

/** Extends a held lease; false when it is no longer this writer's (taken over, or the upload is gone). */
export async function renewChunkLease(db: Database, uploadId: string, chunkIndex: number, writer: string, untilMs: number): Promise<boolean> {
  const res = await db
    .updateTable('upload_chunks')
    .set({ lease_until: untilMs })
    .where('upload_id', '=', uploadId)
    .where('chunk_index', '=', chunkIndex)
    .where('writer', '=', writer)
    .executeTakeFirst();
  return Number(res.numUpdatedRows) === 1;
}

/** Drops `writer`'s lease without touching the chunk's record. */
export async function releaseChunkLease(db: Database, uploadId: string, chunkIndex: number, writer: string): Promise<void> {
  await db
    .updateTable('upload_chunks')
    .set({ writer: null, lease_until: null })
    .where('upload_id', '=', uploadId)
    .where('chunk_index', '=', chunkIndex)
    .where('writer', '=', writer)
    .execute();
}

/**
 * Records what a writer left (bytes stored, whether whole) and releases its lease, only if it
 * still holds it: a late record of a cut request can never overwrite a chunk another writer
 * completed since (design §7). False when the lease was lost.
 */
export async function settleChunk(
  db: Database,
  uploadId: string,
  chunkIndex: number,
  writer: string,
  state: { bytes: number; complete: boolean; sha256: string | null },
): Promise<boolean> {
  const res = await db
    .updateTable('upload_chunks')
    .set({ bytes: state.bytes, complete: state.complete ? 1 : 0, sha256: state.sha256, writer: null, lease_until: null })
    .where('upload_id', '=', uploadId)
    .where('chunk_index', '=', chunkIndex)
    .where('writer', '=', writer)
    .executeTakeFirst();
  return Number(res.numUpdatedRows) === 1;
}

/**
 * Opens upload `row` unless its owner already has `max` unfinished ones (null then). The count
 * and the insert are one transaction, under the owner's row lock on PostgreSQL (SQLite runs one
 * transaction at a time), so uploads opened at once on any process cannot all see room for
 * themselves. A row of the same id made meanwhile (another chunk of this upload) is returned.
 */
export async function createUploadWithin(db: Database, dialect: Dialect, row: UploadRow, max: number): Promise<UploadRow | null> {
  return db.transaction().execute(async (trx) => {
    await lockUser(trx, dialect, row.user_id);
    const existing = await findUpload(trx, row.id);
    if (existing) return existing;
    if ((await countUnfinishedUploads(trx, row.user_id, row.created_at)) >= max) return null;
    return (await trx.insertInto('uploads').values(row).returningAll().executeTakeFirst()) ?? null;
  });
}

/** How many unfinished uploads the user holds (design §6 bound), not counting expired ones. */
export async function countUnfinishedUploads(db: Database, userId: string, now: number): Promise<number> {
  const row = await db
    .selectFrom('uploads')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('user_id', '=', userId)
    .where('expires_at', '>', now)
    .executeTakeFirst();
  return Number(row?.n ?? 0);
}

/**
 * Bytes the user's unfinished uploads hold or are about to hold: what each chunk stores, and a
 * whole chunk for every chunk a writer holds a live lease on (its bytes are still arriving).
 */
export async function unfinishedBytes(db: Database, userId: string, nowMs: number, chunkSize: number): Promise<number> {
  const rows = await db
    .selectFrom('upload_chunks')
    .innerJoin('uploads', 'uploads.id', 'upload_chunks.upload_id')
    .select(['upload_chunks.bytes', 'upload_chunks.writer', 'upload_chunks.lease_until'])
    .where('uploads.user_id', '=', userId)
    .execute();
  return rows.reduce((sum, r) => sum + (r.writer !== null && Number(r.lease_until) >= nowMs ? Math.max(chunkSize, Number(r.bytes)) : Number(r.bytes)), 0);
}

/**
 * Room for a whole file's bytes under max unfinished upload size, taken ahead of them (design
 * §6): its size is unknown until its body ends, so its upload's one chunk row holds the bytes
 * reserved, which every other request of the owner counts (unfinishedBytes). Grows the
 * reservation to `want` bytes where the owner's other uploads leave room for that, else to just
 * `need`; false when not even `need` fits. One transaction, under the owner's row lock on
 * PostgreSQL: bodies streaming at once on any process cannot each take the same room.
 */
export async function reserveWholeFile(
  db: Database,
  dialect: Dialect,
  upload: Pick<UploadRow, 'id' | 'user_id'>,
  bytes: { need: number; want: number },
  bound: RoomBound,
): Promise<number | false> {
  return db.transaction().execute(async (trx) => {
    await lockUser(trx, dialect, upload.user_id);
    const mine = await trx.selectFrom('upload_chunks').select('bytes').where('upload_id', '=', upload.id).where('chunk_index', '=', 0).executeTakeFirst();
    return grantRoom(trx, upload, mine ? Number(mine.bytes) : null, bytes, bound);
  });
}

export interface RoomBound {
  maxUnfinished: number;
  nowMs: number;
  chunkSize: number;
}

/**
 * Opens a whole file's upload and reserves `want` bytes of room for its body, in one
 * transaction under the owner's row lock (reserveWholeFile's, createUploadWithin's): a small
 * file then asks the database nothing more while its body streams. Its id was made up by this
 * request, so no other request holds or names that upload: nothing to look for first. Null when
 * the owner already has `max` unfinished uploads; `reserved` is 0 where `want` does not fit
 * (the body then asks for what it has, as reserveWholeFile).
 */
export async function openWholeWithin(
  db: Database,
  dialect: Dialect,
  row: UploadRow,
  max: number,
  want: number,
  bound: RoomBound,
): Promise<{ upload: UploadRow; reserved: number } | null> {
  return db.transaction().execute(async (trx) => {
    await lockUser(trx, dialect, row.user_id);
    if ((await countUnfinishedUploads(trx, row.user_id, row.created_at)) >= max) return null;
    const upload = await trx.insertInto('uploads').values(row).returningAll().executeTakeFirstOrThrow();
    return { upload, reserved: (await grantRoom(trx, upload, null, { need: 0, want }, bound)) || 0 };
  });
}

/**
 * Within a transaction holding the owner's lock: grows upload `upload`'s reservation (`mine`
 * bytes, null when it has no chunk row yet) to `want` bytes where the owner's other uploads leave
 * room for that, else to just `need`; false when not even `need` fits.
 */
async function grantRoom(trx: Database, upload: Pick<UploadRow, 'id' | 'user_id'>, mine: number | null, bytes: { need: number; want: number }, bound: RoomBound): Promise<number | false> {
  const held = await unfinishedBytes(trx, upload.user_id, bound.nowMs, bound.chunkSize);
  const room = bound.maxUnfinished - (held - (mine ?? 0));
  if (room < bytes.need) return false;
  // Near the bound, no more than the bytes in hand: a reservation ahead of them would refuse
  // another body that fits.
  const granted = room >= bytes.want ? bytes.want : bytes.need;
  if (mine !== null) await trx.updateTable('upload_chunks').set({ bytes: granted }).where('upload_id', '=', upload.id).where('chunk_index', '=', 0).execute();
  else await trx.insertInto('upload_chunks').values({ upload_id: upload.id, chunk_index: 0, bytes: granted, complete: 0, sha256: null, writer: null, lease_until: null }).execute();
  return granted;
}

/** Bytes of the user's listed files (the storage quota counts them with unfinished bytes). */
export async function storedFileBytes(db: Database, userId: string): Promise<number> {
  const row = await db
    .selectFrom('files')
    .select((eb) => eb.fn.sum<number>('size').as('total'))
    .where('user_id', '=', userId)
    .executeTakeFirst();
  return Number(row?.total ?? 0);
}

/**
 * Removes the upload row (its chunks cascade) unless a request is finishing it right now.
 * Resolves true only for the one caller that removed it (cancel, the sweep, a refused finish).
 */
export async function claimUpload(db: Database, id: string, olderThan?: number): Promise<boolean> {
  let q = db
    .deleteFrom('uploads')
    .where('id', '=', id)
    .where((eb) => eb.or([eb('finishing_until', 'is', null), eb('finishing_until', '<', Date.now())]));
  if (olderThan !== undefined) q = q.where('expires_at', '<', olderThan);
  const res = await q.executeTakeFirst();
  return Number(res.numDeletedRows) === 1;
}

/** Removes the upload row whatever its state (the finisher refusing it, or done with it). */
export async function dropUpload(db: Database, id: string): Promise<void> {
  await db.deleteFrom('uploads').where('id', '=', id).execute();
}

/**
 * Compare-and-set: the one request that may turn the upload into a listed file until `untilMs`.
 * A finisher that died leaves a lapsed claim, which the next request for the upload takes over.
 */
export async function claimFinish(db: Database, id: string, nowMs: number, untilMs: number): Promise<boolean> {
  const res = await db
    .updateTable('uploads')
    .set({ finishing_until: untilMs })
    .where('id', '=', id)
    .where((eb) => eb.or([eb('finishing_until', 'is', null), eb('finishing_until', '<', nowMs)]))
    .executeTakeFirst();
  return Number(res.numUpdatedRows) === 1;
}

export async function renewFinish(db: Database, id: string, untilMs: number): Promise<void> {
  await db.updateTable('uploads').set({ finishing_until: untilMs }).where('id', '=', id).execute();
}

/** Gives up a finish claim at once (a transient failure), so the client's retry need not wait for it to lapse. */
export async function releaseFinish(db: Database, id: string): Promise<void> {
  await db.updateTable('uploads').set({ finishing_until: null }).where('id', '=', id).execute();
}

/**
 * Lists `file` and ends the upload at once; `beforeListing` may refuse (throw) inside the
 * transaction. `rememberUntil`: the upload was named by the client's uploadId, so a request of
 * it arriving later (its last answer lost) is told the file it became, until then.
 */
export async function completeFinish(
  db: Database,
  upload: Pick<UploadRow, 'id' | 'total_chunks'>,
  file: FilesTable,
  options: { beforeListing?: (trx: Database) => Promise<void>; rememberUntil?: number } = {},
): Promise<void> {
  await db.transaction().execute(async (trx) => {
    await options.beforeListing?.(trx);
    await insertFile(trx, file);
    await trx.deleteFrom('uploads').where('id', '=', upload.id).execute();
    if (options.rememberUntil !== undefined) {
      // One left from the same uploadId's earlier life, expired but not yet swept, goes first.
      await trx.deleteFrom('finished_uploads').where('id', '=', upload.id).execute();
      await trx.insertInto('finished_uploads').values({ id: upload.id, file_id: file.id, total_chunks: upload.total_chunks, expires_at: options.rememberUntil }).execute();
    }
  });
}

/** What a remembered finished upload became: its file's row, or null when the file was deleted since. */
export async function findFinished(db: Database, id: string, now: number): Promise<{ totalChunks: number; file: FilesTable | null } | undefined> {
  const row = await db.selectFrom('finished_uploads').select(['file_id', 'total_chunks']).where('id', '=', id).where('expires_at', '>', now).executeTakeFirst();
  if (!row) return undefined;
  const file = await db.selectFrom('files').selectAll().where('id', '=', row.file_id).executeTakeFirst();
  return { totalChunks: Number(row.total_chunks), file: file ?? null };
}

export async function listExpiredUploads(db: Database, now: number, limit: number): Promise<Pick<UploadRow, 'id' | 'storage_key' | 'finishing_until'>[]> {
  return db.selectFrom('uploads').select(['id', 'storage_key', 'finishing_until']).where('expires_at', '<', now).orderBy('expires_at').limit(limit).execute();
}

/** Remembers that the owner cancelled upload `id` (design §7), until `expiresAt` (seconds). */
export async function rememberCancel(db: Database, id: string, expiresAt: number): Promise<void> {
  await db
    .insertInto('cancelled_uploads')
    .values({ id, expires_at: expiresAt })
    .onConflict((oc) => oc.column('id').doUpdateSet({ expires_at: expiresAt }))
    .execute();
}

export async function wasCancelled(db: Database, id: string, now: number): Promise<boolean> {
  const row = await db.selectFrom('cancelled_uploads').select('id').where('id', '=', id).where('expires_at', '>', now).executeTakeFirst();
  return row !== undefined;
}

/**
 * Whether upload `id` was cancelled or finished (and is still remembered): a request for it must
 * open nothing again. One statement for the two questions every new upload asks.
 */
export async function wasCancelledOrFinished(db: Database, id: string, now: number): Promise<boolean> {
  const row = await db
    .selectFrom('cancelled_uploads')
    .select('id')
    .where('id', '=', id)
    .where('expires_at', '>', now)
    .unionAll(db.selectFrom('finished_uploads').select('id').where('id', '=', id).where('expires_at', '>', now))
    .executeTakeFirst();
  return row !== undefined;
}

/** Forgets cancelled and finished uploads past the time an unfinished one would have expired. */
export async function forgetOldCancels(db: Database, now: number): Promise<void> {
  await db.deleteFrom('cancelled_uploads').where('expires_at', '<=', now).execute();
  await db.deleteFrom('finished_uploads').where('expires_at', '<=', now).execute();
}
