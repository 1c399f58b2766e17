import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { buildIsStale } from '../../../scripts/web-build.mjs';

/** `npm start` rebuilds the web app when it is missing or older than its sources (design §3). */
describe('when npm start rebuilds the web app', () => {
  const roots: string[] = [];
  afterEach(() => {
    for (const root of roots.splice(0)) fs.rmSync(root, { recursive: true, force: true });
  });

  const at = (file: string, secondsAgo: number) => {
    fs.mkdirSync(path.dirname(file), { recursive: true });
    if (!fs.existsSync(file)) fs.writeFileSync(file, 'x');
    const when = new Date(Date.now() - secondsAgo * 1000);
    fs.utimesSync(file, when, when);
  };

  const project = () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'stash-build-'));
    roots.push(root);
    at(path.join(root, 'src', 'features', 'page.tsx'), 300);
    at(path.join(root, 'contract', 'files.ts'), 300);
    at(path.join(root, 'index.html'), 300);
    return root;
  };

  it('builds on a fresh clone (no dist/)', () => {
    expect(buildIsStale(project())).toBe(true);
  });

  it('keeps a build newer than every source', () => {
    const root = project();
    at(path.join(root, 'dist', 'index.html'), 60);
    expect(buildIsStale(root)).toBe(false);
  });

  it('rebuilds after a pull changed a source file deep in src/, the contract, or the lock file', () => {
    for (const changed of [['src', 'features', 'page.tsx'], ['contract', 'files.ts'], ['package-lock.json']]) {
      const root = project();
      at(path.join(root, 'dist', 'index.html'), 60);
      at(path.join(root, ...changed), 5);
      expect(buildIsStale(root), changed.join('/')).toBe(true);
    }
  });
});
