import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import type { Row } from './stats.ts';

const dist = path.resolve(import.meta.dirname, '../dist');
const kib = (n: number) => `${(n / 1024).toFixed(1)} KiB`;

/** Design §10: the web app's JavaScript, what a first visit loads against everything built. */
export function jsSize(): Row[] {
  const index = path.join(dist, 'index.html');
  if (!fs.existsSync(index)) return [{ benchmark: 'web app JavaScript', stash: 'not built', baselineName: '-', baseline: 'run npm run build' }];
  const html = fs.readFileSync(index, 'utf8');
  const entry = [...html.matchAll(/(?:src|href)="\/(assets\/[^"]+\.js)"/g)].map((m) => m[1]!);
  const all = fs.readdirSync(path.join(dist, 'assets')).filter((f) => f.endsWith('.js')).map((f) => `assets/${f}`);
  const gz = (files: string[]) => files.reduce((sum, f) => sum + zlib.gzipSync(fs.readFileSync(path.join(dist, f))).length, 0);
  const raw = (files: string[]) => files.reduce((sum, f) => sum + fs.statSync(path.join(dist, f)).size, 0);
  return [
    {
      benchmark: 'web app JavaScript loaded by the first page (gzip)',
      stash: `${kib(gz(entry))} (${kib(raw(entry))} raw)`,
      baselineName: 'all JavaScript built (gzip)',
      baseline: `${kib(gz(all))} (${all.length} files)`,
    },
  ];
}
