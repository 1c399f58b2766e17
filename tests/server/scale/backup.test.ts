import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../../server/config.ts';
import { createDeps } from '../../../server/deps.ts';
import { buildApi, buildFilesHost } from '../../../server/app.ts';
import type { BackupManifest } from '../../../server/tools/backup.ts';
import { busySource } from './busy-source.ts';
import { createHttpTestApp, sha256, type HttpTestApp } from '../../helpers/upload.ts';

/** Issue 10 "Backups": a backup taken while uploads go on restores into an empty instance with every file intact. */
const ROOT = path.resolve(import.meta.dirname, '../../..');
const cleanups: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const c of cleanups.reverse()) await c().catch(() => {});
});

function tool(script: 'backup' | 'restore', dir: string, env: Record<string, string>) {
  const child = spawn(process.execPath, ['--import', 'tsx', `server/tools/${script}-main.ts`, dir], { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (out += d.toString()));
  const code = new Promise<number | null>((resolve) => child.once('exit', (c) => resolve(c)));
  return { child, code, output: () => out };
}

function tempDir(name: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `stash-${name}-`));
  cleanups.push(async () => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

function instanceEnv(dataDir: string): Record<string, string> {
  return { DATABASE_URL: `sqlite://${path.join(dataDir, 'stash.db')}`, STORAGE_DRIVER: 'local', DATA_DIR: dataDir };
}

describe('npm run backup / restore (issue 10)', () => {
  it('a backup taken during uploads restores into an empty instance with every file intact', async () => {
    const source: HttpTestApp = await createHttpTestApp('sqlite', { chunkSize: 64 * 1024, env: { STORAGE_DRIVER: 'local' } });
    cleanups.push(() => source.close());
    const { user, hashes, before, put } = await busySource(source);

    const dir = path.join(tempDir('backup'), 'snapshot');
    const run = tool('backup', dir, instanceEnv(source.dataDir));
    // Uploads keep coming while the backup runs.
    while (run.child.exitCode === null) await put();
    expect(await run.code, run.output()).toBe(0);
    const manifest = JSON.parse(fs.readFileSync(path.join(dir, 'manifest.json'), 'utf8')) as BackupManifest;
    const kept = new Set(manifest.files.map((f) => f.actualName));
    for (const name of before) expect(kept.has(name), name).toBe(true);
    for (const f of manifest.files) expect(f.sha256).toBe(hashes.get(f.actualName));

    // Restore into an empty instance, then serve it.
    const fresh = tempDir('restored');
    const restore = tool('restore', dir, instanceEnv(fresh));
    expect(await restore.code, restore.output()).toBe(0);
    const deps = await createDeps(loadConfig({ ...instanceEnv(fresh), LOG_LEVEL: 'silent', RATE_LIMITS: 'off' }));
    const files = await buildFilesHost(deps);
    const api = await buildApi(deps);
    cleanups.push(async () => {
      await files.close();
      await api.close();
      await deps.close();
    });
    const rows = await deps.db.selectFrom('files').select('actual_name').execute();
    expect(rows.map((r) => r.actual_name).sort()).toEqual([...kept].sort());
    for (const name of kept) {
      const res = await files.inject({ method: 'GET', url: `/${name}` });
      expect(res.statusCode).toBe(200);
      expect(sha256(res.rawPayload)).toBe(hashes.get(name));
    }
    expect(await deps.db.selectFrom('uploads').select('id').execute()).toEqual([]);
    const login = await api.inject({ method: 'POST', url: '/api/v1/auth/login', payload: { username: user.username, password: user.password } });
    expect(login.statusCode).toBe(200);

    // A restore never mixes into an instance that holds data.
    const refused = tool('restore', dir, instanceEnv(source.dataDir));
    expect(await refused.code).toBe(2);
    expect(refused.output()).toMatch(/restore: The target is not empty/);

    // A damaged backup is caught by the hashes.
    const victim = manifest.files[0];
    const stored = path.join(dir, 'storage', 'files', String(victim?.key).slice(0, 2), String(victim?.key));
    const bytes = fs.readFileSync(stored);
    bytes[0] = (bytes[0] ?? 0) ^ 0xff;
    fs.writeFileSync(stored, bytes);
    const damaged = tool('restore', dir, instanceEnv(tempDir('damaged')));
    expect(await damaged.code).toBe(1);
    expect(damaged.output()).toContain(`mismatches: 1 (${victim?.actualName})`);
  }, 300_000);
});
