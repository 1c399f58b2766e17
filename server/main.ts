import type { FastifyInstance } from 'fastify';
import { ConfigError, loadConfig, type Role } from './config.ts';
import { createDeps } from './deps.ts';
import { buildApi, buildFilesHost, buildSite } from './app.ts';
import { bootstrap } from './modules/bootstrap.ts';
import { startBackgroundJobs } from './jobs.ts';
import { StorageStartError } from './storage/index.ts';

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

  const deps = await createDeps(config);
  const boot = await bootstrap(deps);
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
  for (const role of config.roles) {
    const app = await builders[role]();
    await app.listen({ port: config.ports[role], host: config.host });
    apps.push(app);
    console.log(`  ${role.padEnd(5)} listening on ${config.host}:${config.ports[role]} (${config.urls[role]})`);
  }
  const stopJobs = config.roles.includes('api') ? startBackgroundJobs(deps) : async () => {};

  let closing = false;
  const shutdown = async (signal: string) => {
    if (closing) return;
    closing = true;
    console.log(`${signal}: finishing in-flight requests, then closing`);
    // Listeners stop accepting first; close() waits for requests already running.
    const timer = setTimeout(() => {
      console.error('shutdown took longer than 30 s; exiting');
      process.exit(1);
    }, 30_000);
    timer.unref();
    await stopJobs();
    await Promise.allSettled(apps.map((a) => a.close()));
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
