import fs from 'node:fs';
import path from 'node:path';
import { accountRemoval } from './account-removal.ts';
import { browser } from './browser.ts';
import { describeHost } from './host.ts';
import { downloadOnly, ingestAndDownload } from './ingest-download.ts';
import { jsSize } from './js-size.ts';
import { listLatency } from './list-latency.ts';
import { memoryUnderUploads } from './memory.ts';
import { options } from './options.ts';
import { smallUploads } from './small-uploads.ts';
import type { Row } from './stats.ts';

// `npm run bench [-- --quick] [name…]`: every benchmark, or the named ones, each beside its anchor from the same run.
const all: Record<string, () => Promise<Row[]> | Row[]> = {
  ingest: ingestAndDownload,
  download: downloadOnly,
  memory: memoryUnderUploads,
  small: smallUploads,
  list: listLatency,
  removal: accountRemoval,
  browser,
  js: jsSize,
};
const chosen = options.names.filter((a) => a in all);
const rows: Row[] = [];
const started = performance.now();
const line = (r: Row) => `| ${r.benchmark} | ${r.stash} | ${r.baselineName}: ${r.baseline} | ${r.ratio ?? '–'} |`;
// Run only when named: `download` repeats rows `ingest` already gives; `removal` is no row of
// issue 9's table and would add some 20 minutes to the full run (its results go to removal.md).
const onlyWhenNamed = new Set(['download', 'removal']);
for (const name of chosen.length > 0 ? chosen : Object.keys(all).filter((n) => !onlyWhenNamed.has(n))) {
  process.stderr.write(`running ${name}…\n`);
  const got = await all[name]!();
  // Printed as they come: a later benchmark that fails does not lose these.
  for (const r of got) process.stderr.write(`${line(r)}\n`);
  rows.push(...got);
}
const table = [
  '| benchmark | Stash | anchor (same run) | ratio of medians |',
  '|---|---|---|---|',
  ...rows.map(line),
].join('\n');
const minutes = ((performance.now() - started) / 60_000).toFixed(1);
const header = `Run on ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC${options.quick ? ' with --quick (smaller sizes, fewer rounds)' : ''}, ${describeHost()}; took ${minutes} min.`;
const out = `${header}\n\n${table}\n`;
// A partial run (named benchmarks, --first-load) must not stand in for the full table in
// results/: it goes beside it, named for what ran.
if (!options.firstLoadOnly) {
  const file = chosen.length > 0 ? `${chosen.join('-')}${options.quick ? '-quick' : ''}.md` : options.quick ? 'quick.md' : 'latest.md';
  fs.mkdirSync(path.join(import.meta.dirname, 'results'), { recursive: true });
  fs.writeFileSync(path.join(import.meta.dirname, 'results', file), out);
}
console.log(out);
