import path from 'node:path';
import { defineConfig } from 'vitest/config';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * The longest files first, so the two workers finish together. Vitest's own order in a fresh
 * clone (CI) is the largest file first, and the page checks' files are small: they ran last, one
 * of them alone for its final ~45 s. Measured alone on 2026-11-29: upload-queue ~75 s,
 * pages-signed-in ~60, pwa ~50, pages-public ~35, phone ~25, admin ~20, every other file ≤ 11.
 * A file not named here runs after these.
 */
const LONGEST_FIRST = ['upload-queue', 'pages-signed-in', 'pwa', 'pages-public', 'phone', 'admin'];

class LongestFirst extends BaseSequencer {
  override sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const rank = (f: TestSpecification) => {
      const i = LONGEST_FIRST.indexOf(path.basename(f.moduleId, '.e2e.ts'));
      return i === -1 ? LONGEST_FIRST.length : i;
    };
    return Promise.resolve([...files].sort((a, b) => rank(a) - rank(b)));
  }
}

// The browser suite (issue 4): real server, real Chromium. Each file starts its own server (own
// data folder, free ports) and browser; two files run at once, which on two cores is the load
// two CI runs side by side have always put on the suite, and about halves its time (the axe
// scans of the pages-*.e2e.ts files alone take minutes). The builds happen once, first (global-setup.ts).
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
    sequence: { sequencer: LongestFirst },
  },
});
