import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { freePort } from '../tests/helpers/free-port.ts';
import { startNginx as startNginxIn } from '../tests/helpers/nginx.ts';
import { untilAnswers } from '../tests/helpers/poll.ts';

export interface Anchor {
  url: string;
  pid: number;
  stop(): Promise<void>;
}

const stopper = (child: ChildProcess) => async () => {
  if (child.exitCode !== null) return;
  child.kill('SIGTERM');
  await new Promise((r) => child.once('exit', r));
};

/** Debian's nginx serving `root` on a loopback high port, with its own configuration (sendfile, as shipped). */
export const startNginx = (root: string, work: string): Promise<Anchor> => startNginxIn(work, (port) => `server { listen 127.0.0.1:${port}; root ${root}; }`);

/** A Node anchor script of bench/ (tus-server.mjs, ingest-floor.mjs) storing into `directory`, in its own process. */
async function startNodeAnchor(script: string, directory: string): Promise<Anchor> {
  const port = await freePort();
  const child = spawn(process.execPath, [path.join(import.meta.dirname, script), directory, String(port)], { stdio: 'ignore' });
  const url = `http://127.0.0.1:${port}`;
  await untilAnswers(url, child);
  return { url, pid: child.pid ?? 0, stop: stopper(child) };
}

/** The tus reference server (@tus/server + @tus/file-store). */
export const startTus = (directory: string) => startNodeAnchor('tus-server.mjs', directory);

/** The least a Node server can do to serve a stored file, Range included (serve-floor.mjs). */
export const startServeFloor = (directory: string) => startNodeAnchor('serve-floor.mjs', directory);

/** A page that posts a picked file in the protocol's slices to a sink that discards them (browser-floor.mjs). */
export const startBrowserFloor = (directory: string) => startNodeAnchor('browser-floor.mjs', directory);

/** The least a Node server can do with Stash's upload and keep it (ingest-floor.mjs). */
export const startIngestFloor = (directory: string) => startNodeAnchor('ingest-floor.mjs', directory);

/** Runs curl with `args` and resolves with what `-w` printed. */
export function curl(args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn('curl', ['-sS', '--fail-with-body', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    // 'close', not 'exit': only then has all of curl's output been read.
    child.on('close', (code) => (code === 0 ? resolve(out) : reject(new Error(`curl ${args.join(' ')}: ${code} ${err} ${out.slice(0, 300)}`))));
  });
}
