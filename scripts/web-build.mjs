// When the built web app (dist/) is out of date, and building it: shared by `npm start` and the
// browser suite, so neither serves an app older than the code beside it.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

/** What the build is made from: a change to any of them makes dist/ stale. */
const INPUTS = ['src', 'public', 'contract', 'index.html', 'vite.config.ts', 'scripts/prerender.mjs', 'scripts/precompress.mjs', 'scripts/react-to-preact.mjs', 'scripts/production-builds.mjs', 'package-lock.json'];

/** Newest modification time under `target` (0 when it is missing); server-build.mjs uses it too. */
export function newestMtime(target) {
  if (!fs.existsSync(target)) return 0;
  const stat = fs.statSync(target);
  if (!stat.isDirectory()) return stat.mtimeMs;
  let newest = 0;
  for (const entry of fs.readdirSync(target)) newest = Math.max(newest, newestMtime(path.join(target, entry)));
  return newest;
}

/** True when dist/index.html is missing or older than any input (e.g. after `git pull`). */
export function buildIsStale(root) {
  const index = path.join(root, 'dist', 'index.html');
  if (!fs.existsSync(index)) return true;
  const built = fs.statSync(index).mtimeMs;
  return INPUTS.some((input) => newestMtime(path.join(root, input)) > built);
}

/**
 * Builds for production whatever NODE_ENV the caller runs under (vitest sets "test", which
 * would bundle React's development build). Returns the exit status.
 */
export function buildWebApp(root, { quiet = false } = {}) {
  const args = ['vite', 'build', ...(quiet ? ['--logLevel', 'warn'] : [])];
  const result = spawnSync('npx', args, { cwd: root, stdio: 'inherit', env: { ...process.env, NODE_ENV: 'production' } });
  return result.status ?? 1;
}
