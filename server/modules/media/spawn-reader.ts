import { fork, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

/**
 * Starts the module `name` (without extension) beside this file as a child process with its
 * own V8 heap limit and arguments `args`, from the sources under tsx or from compiled JavaScript.
 *
 * A child process, not a worker thread: a worker's `resourceLimits` are best effort, and one
 * array grown past the limit (what mp4box does with a crafted `stsz`) aborts the whole process
 * with "Reached heap limit" (nodejs/node#47224), where a child only takes itself down.
 */
export function spawnReader(name: string, heapMb: number, args: string[] = []): ChildProcess {
  const here = import.meta.url;
  const fromSources = here.endsWith('.ts');
  // Beside this module with its extension: the sources (.ts), tsc's output (.js), or the
  // production bundle (.mjs), where scripts/server-build.mjs emits each reader beside main.mjs.
  const built = fromSources ? testBuildReader(name) : null;
  const entry = built ?? fileURLToPath(new URL(`./${name}${path.extname(fileURLToPath(here))}`, here));
  const execArgv = [`--max-old-space-size=${heapMb}`, '--max-semi-space-size=8'];
  if (fromSources && !built) execArgv.push('--import', tsxLoader(here));
  // Its output is dropped: a parser complaining about a hostile file is not the server's log.
  const child = fork(entry, args, { execArgv, serialization: 'advanced', stdio: ['ignore', 'ignore', 'ignore', 'ipc'] });
  return child;
}

/**
 * A reader's niceness once it parses uploaded bytes. At 10 a reader busy on a core the server
 * wants gets about a tenth of it (Linux's weights: 110 against 1,024): the server keeps answering
 * while a hostile file is read (the hostile suite's slowest /healthz was 14–43 ms at 10 and at 19
 * alike). At 19 (15 against 1,024) the server starved its own readers, and an upload waits for
 * its reader's answer: on two cores kept busy by six other processes, a photo's upload took
 * 240–950 ms at 19 against 90–200 ms at 10 (70–150 ms at 0), six photos' previews 11–12 s
 * against 2.8 s (bench/README.md).
 */
export const READER_NICE = 10;

/**
 * Lower CPU priority, for a reader that has started (loaded its parsers) and is about to be
 * given uploaded bytes: on a busy machine one chewing through a hostile file yields to the
 * server's own thread, which must keep answering (issue 8). Not while it starts: at nice 19 on a
 * machine whose cores were busy, a start (1–2 s of CPU from the sources) waited past its 30 s
 * deadline for a core, and the pictures of that moment were stored without a type or previews.
 */
export function lowerPriority(child: ChildProcess): void {
  if (child.pid === undefined) return;
  try {
    os.setPriority(child.pid, READER_NICE);
  } catch {
    // Not allowed on this system, or the reader has just ended: it runs at normal priority.
  }
}

/**
 * Tests only (NODE_ENV=test): `STASH_TEST_READERS` names the folder of a server build that is up
 * to date with these sources (tests/server/global-setup.ts builds it before any test file runs),
 * whose reader the server under test forks instead of the sources under tsx. The same code, as
 * production runs it: under tsx a start cost ~0.7 s of CPU, compiled ~0.2 s, and the server suite
 * starts ~190 readers on a two-core machine.
 */
function testBuildReader(name: string): string | null {
  const dir = process.env.NODE_ENV === 'test' ? process.env.STASH_TEST_READERS : undefined;
  if (!dir) return null;
  const entry = path.join(dir, `${name}.mjs`);
  return fs.existsSync(entry) ? entry : null;
}

/** File URL of tsx's loader (its package's main export), so the child finds it from any cwd. */
function tsxLoader(from: string): string {
  const manifest = createRequire(from).resolve('tsx/package.json');
  const pkg = JSON.parse(fs.readFileSync(manifest, 'utf8')) as { exports: Record<string, unknown> };
  const main = pkg.exports['.'];
  if (typeof main !== 'string') throw new Error('tsx has no main export');
  return pathToFileURL(path.join(path.dirname(manifest), main)).href;
}
