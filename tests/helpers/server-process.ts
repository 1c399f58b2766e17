import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { serverLaunch } from '../../scripts/server-build.mjs';

/**
 * The server as a user runs it, in its own process with real ports: shared by the process
 * tests, the browser suite's harness and the benchmarks, which differ only in their environment.
 * Compiled from `server/main.ts` as `npm start` runs it, or these sources under tsx (`spawnServer`).
 */
const MAIN = path.resolve(import.meta.dirname, '../../server/main.ts');

export interface ServerProcess {
  child: ChildProcess;
  /** Everything the server printed so far (stdout and stderr), for failure messages. */
  output(): string;
  /** The exit code once the process ends. */
  exited: Promise<number | null>;
  /** SIGTERM, then SIGKILL if it has not exited after `graceMs`. */
  stop(graceMs?: number): Promise<void>;
}

/**
 * The environment the process tests start one server with: this test process's environment,
 * its own data folder and loopback ports, a known first admin (boss / boss-password), and
 * warnings only in the log. `extra` adds or overrides variables.
 */
export function serverEnv(dataDir: string, ports: { site: number; api: number; files: number }, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return {
    ...process.env,
    DATA_DIR: dataDir,
    HOST: '127.0.0.1',
    SITE_PORT: String(ports.site),
    API_PORT: String(ports.api),
    FILES_PORT: String(ports.files),
    ADMIN_USERNAME: 'boss',
    ADMIN_PASSWORD: 'boss-password',
    LOG_LEVEL: 'warn',
    ...extra,
  };
}

/**
 * `env` is the whole environment the server sees (callers start from `process.env`). `compiled`:
 * the path of the compiled entry (scripts/server-build.mjs) to run as `npm start` does; by
 * default the one the server tests' global setup built (`STASH_TEST_SERVER`), and without one
 * the TypeScript sources through tsx.
 */
export function spawnServer(env: NodeJS.ProcessEnv, options: { compiled?: string } = {}): ServerProcess {
  const compiled = options.compiled ?? process.env.STASH_TEST_SERVER;
  // The compiled server starts with the flags and environment `npm start` gives it.
  const launch = compiled ? serverLaunch(compiled, env) : { args: ['--import', 'tsx', MAIN], env };
  const child = spawn(process.execPath, launch.args, { cwd: path.dirname(path.dirname(MAIN)), env: launch.env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return {
    child,
    output: () => out,
    exited,
    async stop(graceMs = 10_000) {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** True when `<origin>/healthz` answers 200 right now. */
export async function isHealthy(origin: string): Promise<boolean> {
  try {
    return (await fetch(`${origin}/healthz`)).ok;
  } catch {
    return false;
  }
}

/** Waits until every origin's `/healthz` answers 200; fails early, with the output, if the server exits. */
export async function waitForHealth(server: ServerProcess, origins: string[], timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (const origin of origins) {
    while (!(await isHealthy(origin))) {
      if (server.child.exitCode !== null) throw new Error(`the server exited with ${server.child.exitCode}:\n${server.output()}`);
      if (Date.now() > deadline) throw new Error(`${origin}/healthz never answered 200:\n${server.output()}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

/** The live processes whose parent is `pid`, from /proc (what `ps --ppid` shows): a server's files processes, for one. */
export function childPids(pid: number): number[] {
  const pids: number[] = [];
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
      // Fields after the command's closing parenthesis: state, ppid, …
      const [state, ppid] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(ppid) === pid && state !== 'Z') pids.push(Number(entry));
    } catch {
      // Gone between the listing and the read.
    }
  }
  return pids;
}

/** A server's files processes (server/files-processes.ts): its children running its entry (tsx may start an esbuild service too). */
export function filesProcessPids(server: ServerProcess): number[] {
  return childPids(server.child.pid ?? 0).filter((pid) => {
    try {
      return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('main.');
    } catch {
      return false;
    }
  });
}

/**
 * Waits until the primary says all `count` files processes listen — one answering /healthz is
 * not all of them — and returns their pids; fails early, with the output, if the server exits.
 */
export async function waitForFilesProcesses(server: ServerProcess, count: number, timeoutMs = 60_000): Promise<number[]> {
  await waitForOutput(server, `, ${count} processes`, timeoutMs);
  return filesProcessPids(server);
}

/** Polls until the server has printed `text`; fails early, with the output, if the server exits. */
export async function waitForOutput(server: ServerProcess, text: string, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!server.output().includes(text)) {
    if (server.child.exitCode !== null || server.child.signalCode !== null) throw new Error(`the server exited (${server.child.exitCode ?? server.child.signalCode}):\n${server.output()}`);
    if (Date.now() > deadline) throw new Error(`the server never said "${text}":\n${server.output()}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
