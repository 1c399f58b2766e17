import os from 'node:os';
import { defineConfig } from 'vitest/config';
import react from '@vitejs/plugin-react';
import { runtimeFlags } from './scripts/server-build.mjs';

// Two runtimes, two projects: the server and the upload worker run in Node, the web app in jsdom.
export default defineConfig({
  test: {
    // Vitest keeps a core for itself (one worker on a two-core machine), but most server tests wait
    // on the servers they spawn, on PostgreSQL and on fsync rather than compute: with one worker,
    // `npm test` took as long as its files' times summed, a core idle. Two workers at least.
    maxWorkers: Math.max(2, os.availableParallelism() - 1),
    projects: [
      {
        test: {
          name: 'server',
          environment: 'node',
          include: ['tests/server/**/*.test.ts', 'tests/workers/**/*.test.ts'],
          globalSetup: ['tests/server/global-setup.ts'],
          testTimeout: 60_000,
          hookTimeout: 60_000,
          pool: 'forks',
          // The server's code runs here with the V8 features production starts it with.
          execArgv: runtimeFlags(),
        },
      },
      {
        plugins: [react()],
        test: {
          name: 'web',
          environment: 'jsdom',
          include: ['tests/web/**/*.test.{ts,tsx}'],
          setupFiles: ['tests/web/setup.ts'],
          testTimeout: 20_000,
        },
      },
    ],
  },
});
