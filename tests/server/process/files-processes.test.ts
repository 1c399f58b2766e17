import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { TRUST_MS } from '../../../server/files-host/file-meta-cache.ts';
import { freePort } from '../../helpers/free-port.ts';
import { childPids, filesProcessPids, serverEnv, spawnServer, waitForFilesProcesses, waitForHealth, type ServerProcess } from '../../helpers/server-process.ts';
import { postJson, sendMultipart } from '../../helpers/upload.ts';

/**
 * Issue 9: FILES_PROCESSES runs the files host as several processes on its one port
 * (server/files-processes.ts). What an operator and a visitor would notice: every process
 * serves, a delete is seen on every connection at once (within TRUST_MS when its bytes stay and
 * another process deleted it), a process that dies is replaced,
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

  // A row that goes while its bytes stay (a delete the store refused, an account hidden for
  // removal) is not seen by the store check; the files processes are told nothing by whoever
  // wrote it, and each had cached the file: within TRUST_MS they read its row again.
  it('stops serving, on every files process, a cached file whose row another process deleted or whose account it hid, its bytes still stored', async () => {
    const r = await start({ FILES_PROCESSES: '2' });
    await allListening(r);
    const token = await signIn(origin(r.ports.api));
    const names: string[] = [];
    for (const size of [4096, 200_000]) {
      const up = await sendMultipart(`${origin(r.ports.api)}/api/v1/files/upload`, { fields: { token, originalname: 'kept.bin' }, file: { data: crypto.randomBytes(size), filename: 'kept.bin' } });
      expect(up.status, JSON.stringify(up.body)).toBe(200);
      names.push(String(up.body.url).split('/').pop() ?? '');
    }
    const [deleted, hidden] = names as [string, string];
    // Eight kept-alive connections reach both processes; each asks twice, the second from its cache.
    const agent = new http.Agent({ keepAlive: true, maxSockets: 8 });
    const ask = async (name: string) => (await Promise.all(Array.from({ length: 8 }, () => get(agent, `${origin(r.ports.files)}/${name}`)))).map((a) => a.status);
    for (let i = 0; i < 2; i += 1) for (const name of names) expect(await ask(name)).toEqual(Array(8).fill(200));

    // Another process's writes, straight to the database: its rows, not its bytes.
    const db = new SQLite(path.join(r.dataDir, 'stash.db'));
    db.pragma('busy_timeout = 5000');
    try {
      db.prepare('delete from files where actual_name = ?').run(deleted);
      db.prepare('update users set removing_since = ? where username = ?').run(Math.floor(Date.now() / 1000), 'boss');
    } finally {
      db.close();
    }
    const since = Date.now();
    const stored = () => fs.readdirSync(path.join(r.dataDir, 'storage', 'files'), { recursive: true, withFileTypes: true }).filter((e) => e.isFile()).length;
    expect(stored()).toBe(2);
    await expect.poll(async () => [...(await ask(deleted)), ...(await ask(hidden))], { timeout: TRUST_MS + 3_000, interval: 100 }).toEqual(Array(16).fill(404));
    expect(Date.now() - since).toBeLessThan(TRUST_MS + 3_000);
    // The bytes were never touched: the 404s came from the rows.
    expect(stored()).toBe(2);
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
