import { spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Kysely } from 'kysely';
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
 *   database.pgdump a pg_dump of a PostgreSQL source when pg_dump is installed (for
 *                   operators who prefer pg_restore; `restore` uses stash.db).
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
    const tx = source.db.dialect === 'postgres' ? src.transaction().setIsolationLevel('repeatable read') : src.transaction();
    const rows = await tx.execute(async (trx) => {
      for (const t of RECORD_TABLES) await mirrorTable(trx, dst, t.name, t.key);
      return trx.selectFrom('files').selectAll().orderBy('id').execute();
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
    if (source.db.dialect === 'postgres') manifest.pgDump = pgDump(source.config.databaseUrl, path.join(dir, 'database.pgdump'));
    fs.writeFileSync(path.join(dir, 'manifest.json'), `${JSON.stringify(manifest, null, 2)}\n`);
    return manifest;
  } finally {
    await snapshot.close();
  }
}

function pgDump(url: string, file: string): boolean {
  const run = spawnSync('pg_dump', ['--format=custom', `--file=${file}`, url], { stdio: ['ignore', 'ignore', 'pipe'] });
  if (run.error) return false;
  if (run.status !== 0) throw new Error(`pg_dump failed: ${run.stderr.toString()}`);
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
