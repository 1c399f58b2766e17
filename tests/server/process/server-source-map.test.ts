import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { build } from 'esbuild';
import { BUNDLE_OPTIONS, keepOwnMappings } from '../../../scripts/server-build.mjs';

const ROOT = path.resolve(import.meta.dirname, '../../..');

/**
 * Issue 9, a lean process: the production bundle holds Fastify and the other packages loaded at
 * start, but its source map only our own code's mappings (the packages' were 1.9 MB, all read
 * at start under --enable-source-maps). A stack trace must still be true: our frames at the
 * TypeScript line, a package's frame at its place in the bundle — never at a line of ours.
 */
describe("the server bundle's source map", () => {
  const dir = fs.mkdtempSync(path.join(ROOT, 'dist-server-test-'));
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('maps our frames to the TypeScript source and leaves frames inside a package unmapped', async () => {
    // Our module first, so the bundle holds code of ours before Kysely's (an ES module package,
    // laid out in import order between ours): a frame in Kysely with no mapping of its own would
    // otherwise take the last mapping before it, a line of ours.
    fs.writeFileSync(path.join(dir, 'first.ts'), 'export function greet(name: string): string {\n  return `hello ${name}`;\n}\n');
    fs.writeFileSync(
      path.join(dir, 'entry.ts'),
      [
        "import { greet } from './first.ts';",
        "import { Kysely } from 'kysely';",
        'console.log(greet("you"));',
        'function ours(): void {',
        '  // Kysely reads its dialect in its constructor: without one it throws from its own code.',
        '  new Kysely({} as never);',
        '}',
        'ours();',
        '',
      ].join('\n'),
    );
    await build({
      absWorkingDir: ROOT,
      entryPoints: [path.join(dir, 'entry.ts')],
      outdir: dir,
      outExtension: { '.js': '.mjs' },
      ...BUNDLE_OPTIONS,
      logLevel: 'silent',
    });
    const mapFile = path.join(dir, 'entry.mjs.map');
    const before = JSON.parse(fs.readFileSync(mapFile, 'utf8')) as { sources: string[] };
    expect(before.sources.some((s) => s.includes('node_modules/kysely'))).toBe(true);
    keepOwnMappings(mapFile);
    const after = JSON.parse(fs.readFileSync(mapFile, 'utf8')) as { sources: string[] };
    expect(after.sources.filter((s) => s.includes('node_modules'))).toEqual([]);

    let stack = '';
    try {
      execFileSync(process.execPath, ['--enable-source-maps', path.join(dir, 'entry.mjs')], { encoding: 'utf8', stdio: 'pipe' });
    } catch (err) {
      stack = String((err as { stderr?: string }).stderr);
    }
    const frames = stack.split('\n').filter((line) => /^\s+at /.test(line));
    expect(stack).toMatch(/TypeError/);
    // Kysely's own frame: named, at its place in the bundle, not at a line of ours. A class that
    // refers to itself is bundled as `var Kysely = class _Kysely`, and keeps that inner name.
    const first = frames[0] ?? '';
    expect(first).toMatch(/at new _?Kysely \(.*entry\.mjs:\d+:\d+\)$/);
    expect(first).not.toMatch(/\.ts:/);
    // Ours: the TypeScript line.
    expect(frames.find((f) => /\bours\b/.test(f))).toMatch(/entry\.ts:6:\d+\)$/);
  });
});
