import crypto from 'node:crypto';
import { Readable, Transform } from 'node:stream';
import { sql, type Kysely } from 'kysely';
import { storableSize } from '../modules/files/file-kind.ts';
import type { Storage } from '../storage/storage.ts';
import { ToolUsageError, type Instance } from './instance.ts';
import type { Progress } from './progress.ts';

/**
 * `npm run migrate` (issue 10): copies the instance the environment describes into the one the
 * TARGET_* variables describe — every record, every file's bytes verified by SHA-256 — and can
 * be run again to continue or to catch up with a source that kept serving. README "Deployment
 * at scale" → "Moving an instance".
 */

/** Tables copied as records, parents first. Files are copied apart, with their bytes. */
export const RECORD_TABLES: { name: string; key: string }[] = [
  { name: 'roles', key: 'id' },
  { name: 'users', key: 'id' },
  { name: 'sessions', key: 'id' },
  { name: 'api_keys', key: 'id' },
  { name: 'invites', key: 'id' },
  { name: 'settings', key: 'key' },
  { name: 'mime_types', key: 'mime' },
];
/** Not copied: unfinished uploads (clients resume against the source until the switch) and per-deployment state. */
const TRANSIENT_TABLES = new Set(['uploads', 'upload_chunks', 'cancelled_uploads', 'finished_uploads', 'job_leases', 'doomed_bytes', 'stash_migrations']);
/**
 * Kept by the target's own triggers as files arrive (list counters, the list log, the SQLite
 * name index and its FTS5 shadow tables), or read again by its servers (list anchors and kept
 * name counts: they hold the source's counter values, which mean other list states on the target).
 */
const DERIVED_TABLES = /^(file_counts|file_totals|file_list_log|file_list_anchors|file_name_counts|files_names(_\w+)?)$/;
const PAGE = 500;

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- rows are copied column for column, whatever each table holds
type AnyDb = Kysely<any>;

export interface MigrationSummary {
  records: Record<string, number>;
  files: { total: number; copied: number; alreadyThere: number; removed: number };
  bytes: number;
  mismatches: string[];
  unknownTables: string[];
}

export async function runMigration(source: Instance, target: Instance, progress: Progress): Promise<MigrationSummary> {
  if (source.fingerprint === target.fingerprint) throw new ToolUsageError('The TARGET_* variables describe the same database and store as the source.');
  const src = source.db.db as unknown as AnyDb;
  const dst = target.db.db as unknown as AnyDb;
  await claimTarget(dst, source.fingerprint);

  const summary: MigrationSummary = { records: {}, files: { total: 0, copied: 0, alreadyThere: 0, removed: 0 }, bytes: 0, mismatches: [], unknownTables: await unknownTables(src) };
  for (const table of RECORD_TABLES) summary.records[table.name] = await mirrorTable(src, dst, table.name, table.key);

  // Files: bytes first, verified, then the row — a listed file on the target is always whole.
  const sourceIds = new Set<string>();
  const total = Number((await src.selectFrom('files').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n);
  summary.files.total = total;
  let after = '';
  let seen = 0;
  for (;;) {
    const rows = await src.selectFrom('files').selectAll().where('id', '>', after).orderBy('id').limit(PAGE).execute();
    if (rows.length === 0) break;
    for (const row of rows) {
      after = String(row.id);
      sourceIds.add(after);
      seen += 1;
      const copied = await copyFile(source.storage, target.storage, dst, row);
      if (copied === 'mismatch') summary.mismatches.push(String(row.actual_name));
      else if (copied === 'there') summary.files.alreadyThere += 1;
      else {
        summary.files.copied += 1;
        summary.bytes += Number(row.size);
      }
      progress.update(`files ${seen}/${Math.max(total, seen)} · ${formatBytes(summary.bytes)} copied`);
    }
  }
  // Files deleted on the source since an earlier run go from the target too.
  const targetFiles = await dst.selectFrom('files').select(['id', 'storage_key']).execute();
  for (const f of targetFiles) {
    if (sourceIds.has(String(f.id))) continue;
    await dst.deleteFrom('files').where('id', '=', f.id).execute();
    await target.storage.delete(String(f.storage_key));
    summary.files.removed += 1;
  }
  summary.records.files = sourceIds.size - summary.mismatches.length;
  progress.done();
  await dst.updateTable('stash_migrations').set({ finished_at: Math.floor(Date.now() / 1000) }).where('source', '=', source.fingerprint).execute();
  return summary;
}

/**
 * Refuses a target that holds anything unless it is an earlier run of this same migration
 * (recorded in the target's `stash_migrations` table), so a mistyped TARGET_DATABASE_URL never
 * mixes two sites.
 */
async function claimTarget(dst: AnyDb, fingerprint: string): Promise<void> {
  await dst.schema.createTable('stash_migrations').ifNotExists().addColumn('source', 'text', (c) => c.primaryKey()).addColumn('started_at', 'bigint', (c) => c.notNull()).addColumn('finished_at', 'bigint').execute();
  const runs = await dst.selectFrom('stash_migrations').select('source').execute();
  if (runs.some((r) => r.source === fingerprint)) return;
  if (runs.length > 0) throw new ToolUsageError('The target was filled by a migration from another source; choose an empty target.');
  for (const t of [...RECORD_TABLES.map((r) => r.name), 'files']) {
    const n = Number((await dst.selectFrom(t).select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n);
    if (n > 0) throw new ToolUsageError(`The target is not empty (its ${t} table has ${n} rows); migrate into an empty database.`);
  }
  await dst.insertInto('stash_migrations').values({ source: fingerprint, started_at: Math.floor(Date.now() / 1000), finished_at: null }).execute();
}

/** Upserts every row of `table` from source into target and deletes the target's rows the source no longer has. */
export async function mirrorTable(src: AnyDb, dst: AnyDb, table: string, key: string): Promise<number> {
  const keys = new Set<string>();
  let after: string | null = null;
  for (;;) {
    let q = src.selectFrom(table).selectAll().orderBy(key).limit(PAGE);
    if (after !== null) q = q.where(key, '>', after);
    const rows = await q.execute();
    if (rows.length === 0) break;
    for (const r of rows) keys.add(String(r[key]));
    after = String(rows.at(-1)?.[key]);
    const columns = Object.keys(rows[0] ?? {}).filter((c) => c !== key);
    await dst
      .insertInto(table)
      .values(rows)
      .onConflict((oc) => (columns.length ? oc.column(key).doUpdateSet(Object.fromEntries(columns.map((c) => [c, sql.ref(`excluded.${c}`)]))) : oc.column(key).doNothing()))
      .execute();
  }
  const existing = await dst.selectFrom(table).select(key).execute();
  const gone = existing.map((r) => String(r[key])).filter((k) => !keys.has(k));
  for (let i = 0; i < gone.length; i += PAGE) await dst.deleteFrom(table).where(key, 'in', gone.slice(i, i + PAGE)).execute();
  return keys.size;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- a files row read through AnyDb
export async function copyFile(from: Storage, to: Storage, dst: AnyDb, row: Record<string, any>): Promise<'copied' | 'there' | 'mismatch'> {
  const key = String(row.storage_key);
  const size = Number(row.size);
  const existing = await dst.selectFrom('files').select(['sha256']).where('id', '=', row.id).executeTakeFirst();
  if (existing?.sha256 && (await to.stat(key))?.size === size) return 'there';
  // A run cut off midway may have left part of this object: start it over.
  await to.discard(key);
  const hash = crypto.createHash('sha256');
  const hashing = new Transform({
    transform(chunk: Buffer, _enc, done) {
      hash.update(chunk);
      done(null, chunk);
    },
  });
  const body = size === 0 ? Readable.from([]) : from.read(key).pipe(hashing);
  await to.writeAt(key, 0, body);
  await to.finalize(key, size);
  const sent = hash.digest('hex');
  const stored = size === 0 ? sent : await sha256Of(to.read(key));
  const expected = row.sha256 ? String(row.sha256) : sent;
  if (stored !== sent || sent !== expected) {
    await to.delete(key).catch(() => {});
    return 'mismatch';
  }
  await dst
    .insertInto('files')
    // Previews are objects of their own that are not copied: the target's preview backfill makes them anew.
    // A size older versions recorded from a lying header (over PostgreSQL's integer) goes as unknown.
    .values({ ...row, ...storableSize({ width: row.width ?? null, height: row.height ?? null }), sha256: sent, previews: null })
    .onConflict((oc) => oc.column('id').doUpdateSet({ sha256: sent }))
    .execute();
  return 'copied';
}

export async function sha256Of(stream: Readable): Promise<string> {
  const hash = crypto.createHash('sha256');
  for await (const piece of stream) hash.update(piece as Buffer);
  return hash.digest('hex');
}

async function unknownTables(src: AnyDb): Promise<string[]> {
  const known = new Set([...RECORD_TABLES.map((t) => t.name), 'files', ...TRANSIENT_TABLES]);
  const tables = await src.introspection.getTables();
  return tables.map((t) => t.name).filter((n) => !known.has(n) && !DERIVED_TABLES.test(n) && !n.startsWith('kysely_'));
}

export function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  const units = ['KiB', 'MiB', 'GiB', 'TiB'];
  let v = n / 1024;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i += 1;
  }
  return `${v.toFixed(1)} ${units[i]}`;
}
