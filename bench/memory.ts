import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CHUNK_SIZE } from '../contract/files.ts';
import { startTus } from './anchors.ts';
import { makeSource, stashUpload, tusUpload } from './ingest-download.ts';
import { options } from './options.ts';
import { login, memoryOf, setLimit, startServer } from './server-process.ts';
import { mib, MB, type Row } from './stats.ts';

const SIZE = options.quick ? 2 * CHUNK_SIZE : 1024 * MB;
const PARALLEL = 8;

/** Peak RSS of `pid` while `work` runs, sampled every 50 ms and from the kernel's high-water mark. */
async function peakWhile(pid: number, work: () => Promise<unknown>): Promise<{ idle: number; peak: number; seconds: number }> {
  await new Promise((r) => setTimeout(r, 1000)); // settle after start
  const idle = memoryOf(pid).rss;
  let peak = idle;
  const sampler = setInterval(() => (peak = Math.max(peak, memoryOf(pid).rss)), 50);
  const t0 = performance.now();
  await work();
  const seconds = (performance.now() - t0) / 1000;
  clearInterval(sampler);
  return { idle, peak: Math.max(peak, memoryOf(pid).peak), seconds };
}

/** Issue 9: server memory while 8 large uploads run at once, against the tus server doing the same. */
export async function memoryUnderUploads(): Promise<Row[]> {
  const src = makeSource(SIZE, 11);
  const tusDir = fs.mkdtempSync(path.join(os.tmpdir(), 'stash-tus-mem-'));
  try {
    const server = await startServer();
    const token = await login(server.apiUrl);
    await setLimit(server.apiUrl, token, 'max_unfinished_size', Math.ceil((PARALLEL * SIZE) / MB) * 2);
    await setLimit(server.apiUrl, token, 'max_unfinished_uploads', PARALLEL * 2);
    const stash = await peakWhile(server.pid, () => Promise.all(Array.from({ length: PARALLEL }, (_, i) => stashUpload(server, token, src, `m${i}.bin`))));
    await server.stop();
    fs.rmSync(server.dataDir, { recursive: true, force: true });

    const tus = await startTus(tusDir);
    const anchor = await peakWhile(tus.pid, () => Promise.all(Array.from({ length: PARALLEL }, () => tusUpload(tus.url, src))));
    await tus.stop();
    const what = `${PARALLEL} × ${mib(SIZE)} uploads at once`;
    return [
      {
        benchmark: `server RSS, ${what} (curl)`,
        stash: `peak ${mib(stash.peak)}, idle ${mib(stash.idle)}; ${stash.seconds.toFixed(1)} s`,
        baselineName: 'tus server',
        baseline: `peak ${mib(anchor.peak)}, idle ${mib(anchor.idle)}; ${anchor.seconds.toFixed(1)} s`,
        ratio: `${(stash.peak / anchor.peak).toFixed(2)} × memory, ${(anchor.seconds / stash.seconds).toFixed(2)} × speed`,
      },
    ];
  } finally {
    fs.rmSync(src.dir, { recursive: true, force: true });
    fs.rmSync(tusDir, { recursive: true, force: true });
  }
}
