import { defineConfig } from 'vitest/config';

// The browser suite (issue 4): real server, real Chromium. Each file starts its own server (own
// data folder, free ports) and browser; two files run at once, which on two cores is the load
// two CI runs side by side have always put on the suite, and about halves its time (the axe
// scans of pages.e2e.ts alone take minutes). The builds happen once, first (global-setup.ts).
export default defineConfig({
  test: {
    name: 'e2e',
    environment: 'node',
    include: ['tests/e2e/**/*.e2e.ts'],
    globalSetup: ['tests/e2e/global-setup.ts'],
    testTimeout: 120_000,
    // The global setup may have to build the web app and the server first.
    hookTimeout: 300_000,
    maxWorkers: 2,
    // expect.poll waits for a state (a page reacting, a background job the server finishes);
    // on a loaded two-core machine that can take seconds, and a longer bound costs time only
    // when a test is failing anyway (vitest's default is 1 s).
    expect: { poll: { timeout: 15_000 } },
    pool: 'forks',
  },
});
