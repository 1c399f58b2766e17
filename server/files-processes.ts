import cluster, { type Worker } from 'node:cluster';

/**
 * Issue 9, serving like a static server: one Node process answers small files on one core, while
 * nginx runs a worker per core. The files host keeps nothing another process must see — a name's
 * metadata never changes, every answer checks the stored file still exists, and a row that went
 * while its bytes stay stops being trusted within TRUST_MS (files-host/file-meta-cache.ts) — so it
 * can run as FILES_PROCESSES processes sharing its port through node:cluster (the primary hands
 * each new connection to the next process). The primary keeps the other roles, the first start's
 * bootstrap and the background jobs.
 */

/** Set in a files process's environment: it serves the files host only and bootstraps nothing. */
export const FILES_PROCESS_ENV = 'STASH_FILES_PROCESS';

export function isFilesProcess(): boolean {
  return process.env[FILES_PROCESS_ENV] === '1';
}

/** The first replacement starts after this; doubled while replacements die before listening. */
const FIRST_RESPAWN_DELAY_MS = 1_000;
const MAX_RESPAWN_DELAY_MS = 30_000;

export interface FilesProcesses {
  /** SIGTERM to every files process (each finishes its requests in flight), resolved once all exited. */
  stop(): Promise<void>;
}

/**
 * Forks `count` files processes and resolves once every one listens. One that exits before
 * listening fails the start (its own output says why); one that dies later is replaced, so the
 * files host keeps its capacity without the operator's help.
 */
export async function startFilesProcesses(count: number): Promise<FilesProcesses> {
  const live = new Set<Worker>();
  let closing = false;
  // Until the first start succeeded, a process that cannot listen fails the start (stop() follows),
  // so starting another would only print a misleading line; one that listened is still replaced.
  let started = false;
  let respawnDelay = FIRST_RESPAWN_DELAY_MS;

  const fork = (): Promise<void> =>
    new Promise((resolve, reject) => {
      const worker = cluster.fork({ STASH_ROLES: 'files', [FILES_PROCESS_ENV]: '1' });
      live.add(worker);
      let listening = false;
      worker.once('listening', () => {
        listening = true;
        respawnDelay = FIRST_RESPAWN_DELAY_MS;
        resolve();
      });
      const gone = (what: 'exited' | 'could not be started', how: string) => {
        if (!live.delete(worker)) return;
        if (!listening) reject(new Error(`a files process ${what === 'exited' ? 'exited before it listened' : what} (${how})`));
        if (closing || (!listening && !started)) return;
        const delay = respawnDelay;
        if (!listening) respawnDelay = Math.min(respawnDelay * 2, MAX_RESPAWN_DELAY_MS);
        const who = worker.process.pid === undefined ? 'a files process' : `files process ${worker.process.pid}`;
        console.error(`${who} ${what} (${how}); starting another in ${delay / 1000} s`);
        setTimeout(() => {
          // A replacement that fails is reported and replaced by its own exit or error handler.
          if (!closing) fork().catch(() => {});
        }, delay);
      };
      worker.once('exit', (code, signal) => gone('exited', signal ?? `code ${code}`));
      // A process that cannot be started (no file descriptor or memory left for the fork) emits
      // 'error' and never 'exit'; unheard, that 'error' ended the primary with every upload it
      // served. Other errors (a signal or message that could not be sent) leave 'exit' to say it.
      worker.on('error', (err: NodeJS.ErrnoException) => {
        if (worker.process.pid === undefined) gone('could not be started', err.code ?? err.message);
        else console.error(`files process ${worker.process.pid}: ${err.message}`);
      });
    });

  const stop = async () => {
    closing = true;
    await Promise.all(
      [...live].map(
        (worker) =>
          new Promise<void>((resolve) => {
            if (worker.isDead()) return resolve();
            worker.once('exit', () => resolve());
            worker.process.kill('SIGTERM');
          }),
      ),
    );
  };

  try {
    await Promise.all(Array.from({ length: count }, fork));
    started = true;
  } catch (err) {
    await stop();
    throw err;
  }
  return { stop };
}
