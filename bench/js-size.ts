import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import type { Row } from './stats.ts';

const dist = path.resolve(import.meta.dirname, '../dist');
const kib = (n: number) => `${(n / 1024).toFixed(1)} KiB`;

/** Issue 9's budget: JavaScript on the wire for a first visit to `/`. */
export const FIRST_LOAD_BUDGET_BYTES = 60 * 1024;

/**
 * The scripts a first visit to any page runs before the router picks a screen: index.html's
 * entry and everything it imports statically, transitively. `import("./x.js")` (a lazy route, a
 * library loaded on use) is not followed: it is fetched only when that code runs.
 */
export function firstLoadScripts(root = dist): string[] {
  const html = fs.readFileSync(path.join(root, 'index.html'), 'utf8');
  const todo = [...html.matchAll(/<script[^>]*\bsrc="\/(assets\/[^"]+\.js)"/g)].map((m) => m[1]!);
  const seen = new Set<string>();
  for (let file = todo.pop(); file !== undefined; file = todo.pop()) {
    if (seen.has(file)) continue;
    seen.add(file);
    const code = fs.readFileSync(path.join(root, file), 'utf8');
    // Static `import … from "./x.js"` and `import "./x.js"`; a `(` after `import` is a dynamic one.
    for (const m of code.matchAll(/\bimport\s*(?:[\w$*{][^'"();]*?\bfrom\s*)?["']\.\/([^"']+\.js)["']/g)) {
      todo.push(path.posix.join(path.posix.dirname(file), m[1]!));
    }
  }
  return [...seen].sort();
}

/** Bytes a browser receives for `file` with brotli: the build's .br twin (scripts/precompress.mjs), or the file when none was made. */
export function brotliBytes(file: string, root = dist): number {
  const br = path.join(root, `${file}.br`);
  return fs.statSync(fs.existsSync(br) ? br : path.join(root, file)).size;
}

/** Design §10: the web app's JavaScript, what a first visit loads against everything built. */
export function jsSize(): Row[] {
  if (!fs.existsSync(path.join(dist, 'index.html'))) return [{ benchmark: 'web app JavaScript', stash: 'not built', baselineName: '-', baseline: 'run npm run build' }];
  const first = firstLoadScripts();
  const all = fs.readdirSync(path.join(dist, 'assets')).filter((f) => f.endsWith('.js')).map((f) => `assets/${f}`);
  const br = (files: string[]) => files.reduce((sum, f) => sum + brotliBytes(f), 0);
  const gz = (files: string[]) => files.reduce((sum, f) => sum + zlib.gzipSync(fs.readFileSync(path.join(dist, f))).length, 0);
  const raw = (files: string[]) => files.reduce((sum, f) => sum + fs.statSync(path.join(dist, f)).size, 0);
  return [
    {
      benchmark: 'web app JavaScript loaded by the first page (brotli; gzip; raw)',
      stash: `${kib(br(first))}; ${kib(gz(first))}; ${kib(raw(first))} (${first.length} files)`,
      baselineName: 'all JavaScript built (brotli)',
      baseline: `${kib(br(all))} (${all.length} files); budget for / ${kib(FIRST_LOAD_BUDGET_BYTES)}`,
    },
  ];
}
