import path from 'node:path';
import { ensureServerBuilt } from '../../scripts/server-build.mjs';
import { ensureBuilt } from './harness.ts';

/**
 * Once, before any file starts: the web app and the compiled server are built here when stale,
 * so the files running side by side (vitest.e2e.config.ts) each find them ready instead of two
 * of them building into the same dist/ at once.
 */
export default async function setup(): Promise<void> {
  ensureBuilt();
  await ensureServerBuilt(path.resolve(import.meta.dirname, '../..'));
}
