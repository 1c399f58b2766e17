import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort } from '../tests/helpers/free-port.ts';
import { spawnServer, waitForFilesProcesses, waitForHealth } from '../tests/helpers/server-process.ts';
import { buildServer } from '../scripts/server-build.mjs';

const ROOT = path.resolve(import.meta.dirname, '..');
let compiled: Promise<string> | null = null;

export interface BenchServer {
  siteUrl: string;
  apiUrl: string;
  filesUrl: string;
  dataDir: string;
  pid: number;
  /** What the server printed so far (its log at LOG_LEVEL=warn). */
  output(): string;
  stop(): Promise<void>;
}

/**
 * Starts the real server in its own process, so its memory is measured apart from the client's,
 * from the compiled JavaScript `npm start` runs in production (scripts/server-build.mjs).
 */
export async function startServer(env: Record<string, string> = {}, dataDir?: string): Promise<BenchServer> {
  const dir = dataDir ?? fs.mkdtempSync(path.join(os.tmpdir(), 'stash-bench-'));
  const [site, api, files] = [await freePort(), await freePort(), await freePort()];
  const siteUrl = `http://127.0.0.1:${site}`;
  const apiUrl = `http://127.0.0.1:${api}`;
  const filesUrl = `http://127.0.0.1:${files}`;
  compiled ??= buildServer(ROOT, path.join(ROOT, 'dist-server'));
  const server = spawnServer({
    ...process.env,
    NODE_ENV: 'production',
    DATA_DIR: dir,
    STASH_ROLES: 'api,files',
    HOST: '127.0.0.1',
    SITE_PORT: String(site),
    API_PORT: String(api),
    FILES_PORT: String(files),
    SITE_URL: siteUrl,
    API_URL: apiUrl,
    FILES_URL: filesUrl,
    ADMIN_USERNAME: 'bench',
    ADMIN_PASSWORD: 'bench-password',
    RATE_LIMITS: 'off',
    LOG_LEVEL: 'warn',
    ...env,
  }, { compiled: await compiled });
  // A benchmark that throws must not leave its server running.
  const killOnExit = () => server.child.kill('SIGKILL');
  process.once('exit', killOnExit);
  const roles = (env.STASH_ROLES ?? 'api,files').split(',');
  const listeners = { site: siteUrl, api: apiUrl, files: filesUrl } as const;
  await waitForHealth(server, roles.map((r) => listeners[r as keyof typeof listeners]));
  if (env.FILES_PROCESSES && roles.includes('files')) await waitForFilesProcesses(server, Number(env.FILES_PROCESSES));
  return {
    siteUrl,
    apiUrl,
    filesUrl,
    dataDir: dir,
    pid: server.child.pid ?? 0,
    output: () => server.output(),
    async stop() {
      process.removeListener('exit', killOnExit);
      await server.stop();
    },
  };
}

export async function login(apiUrl: string): Promise<string> {
  const res = await fetch(`${apiUrl}/api/v1/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ username: 'bench', password: 'bench-password' }),
  });
  const body = (await res.json()) as { token?: string };
  if (!body.token) throw new Error(`login failed: ${JSON.stringify(body)}`);
  return body.token;
}

/**
 * Raises one of Site Settings' upload bounds, as an operator would: 8 × 1 GiB unfinished at once
 * in one account is more than the default 2048 MB (design §6, issue 8 item 4).
 */
export async function setLimit(apiUrl: string, token: string, setting: 'max_unfinished_uploads' | 'max_unfinished_size', value: number): Promise<void> {
  const res = await fetch(`${apiUrl}/api/v1/admin/set/limit`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ token, setting, value }),
  });
  if (!res.ok) throw new Error(`admin/set/limit ${setting}=${value}: ${res.status} ${await res.text()}`);
}

/** Resident set size of a process now and at its peak (VmHWM), in bytes. */
export function memoryOf(pid: number): { rss: number; peak: number } {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(status)?.[1] ?? 0) * 1024;
  return { rss: kb('VmRSS'), peak: kb('VmHWM') };
}
