import { spawn, spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../../server/config.ts';
import { createDeps } from '../../../server/deps.ts';
import { buildFilesHost } from '../../../server/app.ts';
import type { BackupManifest } from '../../../server/tools/backup.ts';
import { busySource } from './busy-source.ts';
import { createHttpTestApp, sha256 } from '../../helpers/upload.ts';

/**
 * Issue 10 "Backups" on PostgreSQL: the backup's database.pgdump is dumped from the same snapshot
 * as its manifest, so a backup taken during uploads restores with pg_restore into an empty
 * database with every listed file's bytes there. The backup tool reads a whole database (not a
 * test schema), so this test makes its own databases next to TEST_DATABASE_URL's.
 */
const ROOT = path.resolve(import.meta.dirname, '../../..');
const BASE_URL = process.env.TEST_DATABASE_URL;
const PG_DUMP = spawnSync('pg_dump', ['--version']).status === 0 && spawnSync('pg_restore', ['--version']).status === 0;

const cleanups: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const c of cleanups.reverse()) await c().catch(() => {});
});

async function admin<T>(run: (c: pg.Client) => Promise<T>): Promise<T> {
  const c = new pg.Client({ connectionString: BASE_URL });
  await c.connect();
  try {
    return await run(c);
  } finally {
    await c.end();
  }
}

/** A new empty database, dropped after the tests. */
async function freshDatabase(label: string): Promise<string> {
  const name = `stash_${label}_${crypto.randomBytes(5).toString('hex')}`;
  await admin((c) => c.query(`create database ${name}`));
  cleanups.push(async () => {
    await admin((c) => c.query(`drop database if exists ${name} with (force)`));
  });
  const url = new URL(BASE_URL ?? '');
  url.pathname = `/${name}`;
  return url.toString();
}

function tempDir(name: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `stash-${name}-`));
  cleanups.push(async () => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

function run(command: string, args: string[], env: Record<string, string> = {}) {
  const child = spawn(command, args, { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (out += d.toString()));
  const code = new Promise<number | null>((resolve) => child.once('exit', (c) => resolve(c)));
  return { child, code, output: () => out };
}

describe.skipIf(!BASE_URL || !PG_DUMP)('npm run backup on PostgreSQL (issue 10)', () => {
  it('dumps the snapshot of its manifest: a backup taken during uploads pg_restores into an empty database with every file intact', async () => {
    const sourceUrl = await freshDatabase('bksrc');
    const source = await createHttpTestApp('sqlite', { chunkSize: 64 * 1024, env: { DATABASE_URL: sourceUrl, STORAGE_DRIVER: 'local' } });
    cleanups.push(() => source.close());
    const { hashes, before, put } = await busySource(source);

    const dir = path.join(tempDir('pgbackup'), 'snapshot');
    const backup = run(process.execPath, ['--import', 'tsx', 'server/tools/backup-main.ts', dir], { DATABASE_URL: sourceUrl, STORAGE_DRIVER: 'local', DATA_DIR: source.dataDir });
    // Uploads keep coming while the backup runs: the dump must not list any the manifest lacks.
    while (backup.child.exitCode === null) await put();
    expect(await backup.code, backup.output()).toBe(0);
    const uploadedDuring = hashes.size - before.size;
    const manifest = JSON.parse(fs.readFileSync(path.join(dir, 'manifest.json'), 'utf8')) as BackupManifest;
    expect(manifest.pgDump).toBe(true);
    const kept = new Set(manifest.files.map((f) => f.actualName));
    for (const name of before) expect(kept.has(name), name).toBe(true);

    // Restore the dump into an empty database, the backup's bytes into an empty data folder.
    const targetUrl = await freshDatabase('bkdst');
    const restore = run('pg_restore', ['--no-owner', `--dbname=${targetUrl}`, path.join(dir, 'database.pgdump')]);
    expect(await restore.code, restore.output()).toBe(0);
    const dataDir = tempDir('pgrestored');
    fs.cpSync(path.join(dir, 'storage', 'files'), path.join(dataDir, 'storage', 'files'), { recursive: true });
    const deps = await createDeps(loadConfig({ DATABASE_URL: targetUrl, DATA_DIR: dataDir, STORAGE_DRIVER: 'local', LOG_LEVEL: 'silent', RATE_LIMITS: 'off' }));
    const files = await buildFilesHost(deps);
    cleanups.push(async () => {
      await files.close();
      await deps.close();
    });
    const rows = await deps.db.selectFrom('files').select('actual_name').execute();
    expect(rows.map((r) => r.actual_name).sort(), `${uploadedDuring} uploads finished during the backup`).toEqual([...kept].sort());
    for (const name of kept) {
      const res = await files.inject({ method: 'GET', url: `/${name}` });
      expect(res.statusCode, name).toBe(200);
      expect(sha256(res.rawPayload)).toBe(hashes.get(name));
    }
    // Unfinished uploads are not kept: their bytes are not in the backup.
    expect(await deps.db.selectFrom('uploads').select('id').execute()).toEqual([]);
  }, 300_000);
});
