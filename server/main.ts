import cluster from 'node:cluster';
import type { FastifyInstance } from 'fastify';
import { ConfigError, loadConfig, type Role } from './config.ts';
import { createDeps } from './deps.ts';
import { buildApi, buildFilesHost, buildSite } from './app.ts';
import { bootstrap } from './modules/bootstrap.ts';
import { startBackgroundJobs } from './jobs.ts';
import { preloadListAnchors, preloadNameFilters } from './modules/files/files.repository.ts';
import { StorageStartError } from './storage/index.ts';
import { isFilesProcess, startFilesProcesses, type FilesProcesses } from './files-processes.ts';

async function main(): Promise<void> {
  let config;
  try {
    config = loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(err.message);
      process.exit(1);
    }
    throw err;
  }

  const filesProcess = isFilesProcess();
  // Under another supervisor's cluster (pm2 and the like) this process is already one of several.
  const forkFiles = !filesProcess && cluster.isPrimary && config.filesProcesses > 1 && config.roles.includes('files');
  const ownRoles = forkFiles ? config.roles.filter((r) => r !== 'files') : config.roles;

  const deps = await createDeps(config);
  // A files process is forked after the primary's bootstrap: there is nothing left for it to do.
  const boot = filesProcess ? { admin: null } : await bootstrap(deps);
  if (boot.admin) {
    // Printed once, on the start that created them (design §4); only hashes are stored.
    console.log(
      [
        '',
        '  First start: an administrator account was created.',
        `    username: ${boot.admin.username}`,
        `    password: ${boot.admin.generated ? boot.admin.password : '(the ADMIN_PASSWORD you set)'}`,
        `    invite key: ${boot.inviteKey ?? '-'}`,
        '  Keep them somewhere safe: they are not shown again.',
        '',
      ].join('\n'),
    );
  }

  const builders: Record<Role, () => Promise<FastifyInstance>> = {
    site: () => buildSite(deps),
    api: () => buildApi(deps),
    files: () => buildFilesHost(deps),
  };
  const apps: FastifyInstance[] = [];
  const listening = (role: Role, note = '') => console.log(`  ${role.padEnd(5)} listening on ${config.host}:${config.ports[role]} (${config.urls[role]})${note}`);
  // Issue 9: the largest lists' kept anchors are this process's before it answers, so a deep page
  // right after a start (a deploy, a restart) reads and carries none (files.repository.ts); and
  // what a name filter needs (PostgreSQL's statistics, SQLite's reading thread).
  if (ownRoles.includes('api')) {
    await preloadListAnchors(deps.db).catch((err: unknown) => console.error('list anchors preload failed', err));
    await preloadNameFilters(deps.db).catch((err: unknown) => console.error('name filter preload failed', err));
  }
  for (const role of ownRoles) {
    const app = await builders[role]();
    await app.listen({ port: config.ports[role], host: config.host });
    apps.push(app);
    // The primary speaks for its files processes, once.
    if (!filesProcess) listening(role);
  }
  let filesProcesses: FilesProcesses | null = null;
  if (forkFiles) {
    filesProcesses = await startFilesProcesses(config.filesProcesses);
    listening('files', `, ${config.filesProcesses} processes`);
  }
  const stopJobs = ownRoles.includes('api') ? startBackgroundJobs(deps) : async () => {};

  let closing = false;
  const shutdown = async (signal: string) => {
    if (closing) return;
    closing = true;
    if (!filesProcess) console.log(`${signal}: finishing in-flight requests, then closing`);
    // Listeners stop accepting first; close() waits for requests already running.
    const timer = setTimeout(() => {
      console.error('shutdown took longer than 30 s; exiting');
      process.exit(1);
    }, 30_000);
    timer.unref();
    // First, so a files process that got the same signal from the terminal is not replaced.
    const filesStopped = filesProcesses?.stop();
    await stopJobs();
    await Promise.allSettled([...apps.map((a) => a.close()), filesStopped]);
    await deps.close();
    process.exit(0);
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
}

main().catch((err: unknown) => {
  // A store that cannot serve (missing bucket, bad credentials) is one sentence, not a stack.
  console.error(err instanceof StorageStartError ? `Cannot start: ${err.message}` : err);
  process.exit(1);
});
