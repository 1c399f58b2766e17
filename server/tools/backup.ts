import { spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { sql, type Kysely } from 'kysely';
import { migrate, openDatabase } from '../db/index.ts';
import { LocalStorage } from '../storage/local.ts';
import { ToolUsageError, type Instance } from './instance.ts';
import { copyFile, mirrorTable, RECORD_TABLES, type MigrationSummary } from './migrate.ts';
import type { Progress } from './progress.ts';

/**
 * `npm run backup -- <dir>` and `npm run restore -- <dir>` (issue 10; README "Backups").
 * A backup is a directory holding:
 *   stash.db        every record, read in one transaction (a consistent snapshot while the
 *                   server keeps serving), as SQLite whatever the source database is;
 *                   files.sha256 is filled for every file;
 *   storage/files/  every listed file's bytes (the local driver's layout), copied after the
 *                   snapshot and verified against their SHA-256;
 *   manifest.json   when, from what, and each file's key, size and SHA-256;
 *   database.pgdump a pg_dump of a PostgreSQL source when pg_dump is installed, of the same
 *                   snapshot as stash.db (exported from the backup's transaction), for
 *                   operators who prefer pg_restore; `restore` uses stash.db.
 * Unfinished uploads are not kept: their clients start them again after a restore.
 */

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- records are copied column for column
type AnyDb = Kysely<any>;

export interface BackupManifest {
  format: 1;
  id: string;
  createdAt: string;
  source: { database: 'sqlite' | 'postgres'; storage: 'local' | 's3' };
  files: { key: string; actualName: string; size: number; sha256: string }[];
  /** Listed in the snapshot but deleted from the store before their bytes were copied. */
  vanished: string[];
  pgDump: boolean;
}

export async function backup(source: Instance, dir: string, progress: Progress): Promise<BackupManifest> {
  if (fs.existsSync(dir) && fs.readdirSync(dir).length > 0) throw new ToolUsageError(`${dir} is not empty; back up into a new directory.`);
  fs.mkdirSync(path.join(dir, 'storage'), { recursive: true });
  const snapshot = openDatabase(`sqlite://${path.join(dir, 'stash.db')}`);
  const dst = snapshot.db as unknown as AnyDb;
  try {
    await migrate(snapshot.db);
    // One transaction: every table as of one moment, while uploads go on (design §7 rows).
    const src = source.db.db as unknown as AnyDb;
    // PostgreSQL: one repeatable-read snapshot; SQLite (WAL): a read transaction is one already.
    const postgres = source.db.dialect === 'postgres';
    const tx = postgres ? src.transaction().setIsolationLevel('repeatable read') : src.transaction();
    let pgDumped = false;
    const rows = await tx.execute(async (trx) => {
      for (const t of RECORD_TABLES) await mirrorTable(trx, dst, t.name, t.key);
      const files = await trx.selectFrom('files').selectAll().orderBy('id').execute();
      if (postgres) {
        // pg_dump reads this very snapshot while the transaction stays open, so the dump holds
        // exactly the files of the manifest: none uploaded since, whose bytes the backup lacks.
        const exported = await sql<{ id: string }>`select pg_export_snapshot() as id`.execute(trx);
        pgDumped = await pgDump(source.config.databaseUrl, path.join(dir, 'database.pgdump'), exported.rows[0]?.id ?? '');
      }
      return files;
    });
    const bytes = new LocalStorage(path.join(dir, 'storage'));
    const manifest: BackupManifest = {
      format: 1,
      id: crypto.randomUUID(),
      createdAt: new Date().toISOString(),
      source: { database: source.db.dialect, storage: source.config.storage.driver },
      files: [],
      vanished: [],
      pgDump: false,
    };
    let done = 0;
    for (const row of rows) {
      done += 1;
      progress.update(`files ${done}/${rows.length}`);
      if (!(await source.storage.stat(String(row.storage_key)))) {
        manifest.vanished.push(String(row.actual_name));
        continue;
      }
      const result = await copyFile(source.storage, bytes, dst, row);
      if (result === 'mismatch') throw new Error(`${String(row.actual_name)}: its bytes do not match its recorded SHA-256; the backup stops`);
      const saved = await dst.selectFrom('files').select('sha256').where('id', '=', row.id).executeTakeFirstOrThrow();
      manifest.files.push({ key: String(row.storage_key), actualName: String(row.actual_name), size: Number(row.size), sha256: String(saved.sha256) });
    }
    progress.done();
    manifest.pgDump = pgDumped;
    fs.writeFileSync(path.join(dir, 'manifest.json'), `${JSON.stringify(manifest, null, 2)}\n`);
    return manifest;
  } finally {
    await snapshot.close();
  }
}

/** Dumps the database as of an exported snapshot; false when pg_dump is not installed. */
async function pgDump(url: string, file: string, snapshot: string): Promise<boolean> {
  // Unfinished uploads are not kept, as in stash.db: their partial bytes are not in the backup.
  const args = ['--format=custom', `--snapshot=${snapshot}`, '--exclude-table-data=uploads', '--exclude-table-data=upload_chunks', `--file=${file}`, url];
  const child = spawn('pg_dump', args, { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const result = await new Promise<{ missing: boolean; code: number | null }>((resolve) => {
    child.once('error', (err: NodeJS.ErrnoException) => resolve({ missing: err.code === 'ENOENT', code: null }));
    child.once('close', (code) => resolve({ missing: false, code }));
  });
  if (result.missing) return false;
  if (result.code !== 0) throw new Error(`pg_dump failed: ${stderr}`);
  return true;
}

/** The backup in `dir` as a migration source: its snapshot database and its bytes. */
export function openBackup(dir: string): Instance & { manifest: BackupManifest } {
  const manifestFile = path.join(dir, 'manifest.json');
  if (!fs.existsSync(manifestFile)) throw new ToolUsageError(`${dir} holds no backup (manifest.json is missing).`);
  const manifest = JSON.parse(fs.readFileSync(manifestFile, 'utf8')) as BackupManifest;
  const db = openDatabase(`sqlite://${path.join(dir, 'stash.db')}`);
  return {
    manifest,
    // Only db, storage and fingerprint are read from a migration source.
    config: undefined as never,
    db,
    storage: new LocalStorage(path.join(dir, 'storage')),
    fingerprint: `backup:${manifest.id}`,
    close: () => db.close(),
  };
}

export function restoreComplete(summary: MigrationSummary, manifest: BackupManifest): boolean {
  return summary.mismatches.length === 0 && summary.records.files === manifest.files.length;
}
