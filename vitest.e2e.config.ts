import { defineConfig } from 'vitest/config';

// The browser suite (issue 4): real server, real Chromium. One file at a time, because each
// file starts its own server and browser and the machines have two cores.
export default defineConfig({
  test: {
    name: 'e2e',
    environment: 'node',
    include: ['tests/e2e/**/*.e2e.ts'],
    testTimeout: 120_000,
    // The first file may have to build the web app before its server starts.
    hookTimeout: 300_000,
    fileParallelism: false,
    // expect.poll waits for a state (a page reacting, a background job the server finishes);
    // on a loaded two-core machine that can take seconds, and a longer bound costs time only
    // when a test is failing anyway (vitest's default is 1 s).
    expect: { poll: { timeout: 15_000 } },
    pool: 'forks',
  },
});
