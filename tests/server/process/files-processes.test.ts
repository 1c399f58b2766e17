import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { freePort } from '../../helpers/free-port.ts';
import { childPids, filesProcessPids, serverEnv, spawnServer, waitForFilesProcesses, waitForHealth, type ServerProcess } from '../../helpers/server-process.ts';
import { postJson, sendMultipart } from '../../helpers/upload.ts';

/**
 * Issue 9: FILES_PROCESSES runs the files host as several processes on its one port
 * (server/files-processes.ts). What an operator and a visitor would notice: every process
 * serves, a delete is seen on every connection at once, a process that dies is replaced,
 * SIGTERM leaves nothing running, and a files host that cannot start stops the start.
 */
interface Running extends ServerProcess {
  dataDir: string;
  ports: { site: number; api: number; files: number };
}

const started: Running[] = [];

async function start(env: Record<string, string>): Promise<Running> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'stash-files-processes-'));
  const ports = { site: await freePort(), api: await freePort(), files: await freePort() };
  const server = spawnServer(serverEnv(dataDir, ports, { STASH_ROLES: 'api,files', FILES_URL: `http://127.0.0.1:${ports.files}`, ...env }));
  const running = { ...server, dataDir, ports };
  started.push(running);
  return running;
}

afterEach(async () => {
  for (const r of started.splice(0)) {
    for (const pid of childPids(r.child.pid ?? 0)) kill(pid);
    if (r.child.exitCode === null && r.child.signalCode === null) {
      r.child.kill('SIGKILL');
      await r.exited;
    }
    fs.rmSync(r.dataDir, { recursive: true, force: true });
  }
});

function kill(pid: number, signal: NodeJS.Signals = 'SIGKILL'): void {
  try {
    process.kill(pid, signal);
  } catch {
    // Already gone.
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** GET over one of the agent's kept-alive connections. */
function get(agent: http.Agent, url: string): Promise<{ status: number; body: Buffer }> {
  return new Promise((resolve, reject) => {
    http
      .get(url, { agent }, (res) => {
        const parts: Buffer[] = [];
        res.on('data', (d: Buffer) => parts.push(d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(parts) }));
      })
      .on('error', reject);
  });
}

async function signIn(apiUrl: string): Promise<string> {
  const login = await postJson(`${apiUrl}/api/v1/auth/login`, { username: 'boss', password: 'boss-password' });
  expect(login.status, JSON.stringify(login.body)).toBe(200);
  return String(login.body.token);
}

const origin = (port: number) => `http://127.0.0.1:${port}`;

/** Up once every files process listens, which the primary says once, with the files host's address; their pids. */
async function allListening(r: Running): Promise<number[]> {
  await waitForHealth(r, [origin(r.ports.api), origin(r.ports.files)], 60_000);
  const pids = await waitForFilesProcesses(r, 2);
  expect(r.output()).toContain(`files listening on 127.0.0.1:${r.ports.files} (http://127.0.0.1:${r.ports.files}), 2 processes`);
  return pids;
}

describe('FILES_PROCESSES (issue 9: the files host on every core)', () => {
  it('serves a file from every files process and, once it is deleted, answers 404 on every connection at once', async () => {
    const r = await start({ FILES_PROCESSES: '2', LOG_LEVEL: 'info' });
    const workers = await allListening(r);
    expect(workers).toHaveLength(2);

    const token = await signIn(origin(r.ports.api));
    const data = crypto.randomBytes(4096);
    const up = await sendMultipart(`${origin(r.ports.api)}/api/v1/files/upload`, { fields: { token, originalname: 'small.bin' }, file: { data, filename: 'small.bin' } });
    expect(up.status, JSON.stringify(up.body)).toBe(200);
    const name = String(up.body.url).split('/').pop() ?? '';
    const fileUrl = `${origin(r.ports.files)}/${name}`;

    // The primary hands new connections to its files processes in turn: eight kept-alive
    // connections reach both, and each asks twice (the second answer comes from its cache).
    const agent = new http.Agent({ keepAlive: true, maxSockets: 8 });
    const ask = () => Promise.all(Array.from({ length: 8 }, () => get(agent, fileUrl)));
    for (const answers of [await ask(), await ask()]) {
      for (const a of answers) {
        expect(a.status).toBe(200);
        expect(a.body.equals(data)).toBe(true);
      }
    }
    const servedBy = new Set(
      r
        .output()
        .split('\n')
        .filter((line) => line.includes(`"url":"/${name}"`))
        .map((line) => (JSON.parse(line) as { pid: number }).pid),
    );
    expect([...servedBy].sort()).toEqual([...workers].sort());

    const deleted = await postJson(`${origin(r.ports.api)}/api/v1/files/delete`, { token, filePath: name });
    expect(deleted.status).toBe(200);
    for (const a of await ask()) expect(a.status).toBe(404);
    agent.destroy();
  }, 90_000);

  it('replaces a files process that dies, and SIGTERM stops the primary and every files process', async () => {
    const r = await start({ FILES_PROCESSES: '2' });
    const [first, second] = await allListening(r);
    expect(second).toBeDefined();

    kill(first ?? 0);
    await expect.poll(() => r.output(), { timeout: 10_000 }).toContain(`files process ${first} exited (SIGKILL); starting another`);
    // The other process answers while the replacement starts.
    expect((await fetch(`${origin(r.ports.files)}/healthz`)).status).toBe(200);
    await expect
      .poll(() => filesProcessPids(r).filter((pid) => pid !== first && pid !== second).length, { timeout: 60_000, interval: 200 })
      .toBe(1);
    const now = filesProcessPids(r);
    expect(now).toHaveLength(2);
    await waitForHealth(r, [origin(r.ports.files)], 30_000);

    r.child.kill('SIGTERM');
    expect(await r.exited).toBe(0);
    for (const pid of now) await expect.poll(() => alive(pid), { timeout: 10_000 }).toBe(false);
    expect(r.output()).not.toMatch(/exited \(code 0\); starting another|exited \(SIGTERM\); starting another/);
  }, 120_000);

  it('keeps the primary up when a replacement cannot be started (no file descriptors left), and starts one once it can', async () => {
    const r = await start({ FILES_PROCESSES: '2' });
    const [first, second] = await allListening(r);
    const primary = r.child.pid ?? 0;
    const limits = execFileSync('prlimit', [`--pid=${primary}`, '--nofile', '--output=SOFT,HARD', '--noheadings'], { encoding: 'utf8' }).trim().split(/\s+/);
    // Every new descriptor of the primary past the first ten fails (EMFILE), as when connections
    // use them all up: the pipes a fork needs cannot be made.
    execFileSync('prlimit', [`--pid=${primary}`, `--nofile=10:${limits[1]}`]);
    try {
      kill(first ?? 0);
      await expect.poll(() => r.output(), { timeout: 15_000 }).toMatch(/a files process could not be started \(EMFILE\); starting another in \d+ s/);
      expect(r.child.exitCode).toBeNull();
      expect(alive(primary)).toBe(true);
    } finally {
      execFileSync('prlimit', [`--pid=${primary}`, `--nofile=${limits.join(':')}`]);
    }
    await expect
      .poll(() => filesProcessPids(r).filter((pid) => pid !== first && pid !== second).length, { timeout: 60_000, interval: 200 })
      .toBe(1);
    await waitForHealth(r, [origin(r.ports.api), origin(r.ports.files)], 30_000);
    r.child.kill('SIGTERM');
    expect(await r.exited).toBe(0);
  }, 120_000);

  it('stops the start, with the files process\'s reason, when the files host cannot listen', async () => {
    const taken = net.createServer();
    const port = await freePort();
    await new Promise<void>((resolve) => taken.listen(port, '127.0.0.1', resolve));
    try {
      const r = await start({ FILES_PROCESSES: '2', FILES_PORT: String(port) });
      expect(await r.exited).toBe(1);
      expect(r.output()).toContain('EADDRINUSE');
      expect(r.output()).toContain('a files process exited before it listened');
      // A start that failed replaces nothing, and says nothing about replacing.
      expect(r.output()).not.toContain('starting another');
    } finally {
      taken.close();
    }
  }, 90_000);
});
