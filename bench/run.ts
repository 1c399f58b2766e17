import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ingestAndDownload } from './ingest-download.ts';
import { jsSize } from './js-size.ts';
import { listLatency } from './list-latency.ts';
import { memoryUnderUploads } from './memory.ts';
import type { Row } from './stats.ts';

// `npm run bench [name…]`: every benchmark, or the named ones, each beside its baseline from the same run.
const all: Record<string, () => Promise<Row[]> | Row[]> = {
  ingest: ingestAndDownload,
  memory: memoryUnderUploads,
  list: listLatency,
  js: jsSize,
};
const chosen = process.argv.slice(2).filter((a) => a in all);
const rows: Row[] = [];
for (const name of chosen.length > 0 ? chosen : Object.keys(all)) {
  process.stderr.write(`running ${name}…\n`);
  rows.push(...(await all[name]!()));
}
const table = [
  '| benchmark | Stash | baseline (same run) |',
  '|---|---|---|',
  ...rows.map((r) => `| ${r.benchmark} | ${r.stash} | ${r.baselineName}: ${r.baseline} |`),
].join('\n');
const header = `Run on ${new Date().toISOString().slice(0, 10)}, ${os.cpus().length} cores, ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB, Node ${process.version}.`;
const out = `${header}\n\n${table}\n`;
fs.mkdirSync(path.join(import.meta.dirname, 'results'), { recursive: true });
fs.writeFileSync(path.join(import.meta.dirname, 'results', 'latest.md'), out);
console.log(out);
