import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CHUNK_SIZE } from '../contract/files.ts';
import { startTus } from './anchors.ts';
import { makeSource, stashUpload, tusUpload } from './ingest-download.ts';
import { options } from './options.ts';
import { login, memoryOf, setLimit, startServer } from './server-process.ts';
import { interleave, median, mib, min, MB, type Row } from './stats.ts';

const SIZE = options.quick ? 2 * CHUNK_SIZE : 1024 * MB;
const PARALLEL = 8;
const ROUNDS = options.quick ? 2 : 3;

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

interface Sample {
  idle: number[];
  peak: number[];
}

/**
 * Issue 9: server memory while 8 large uploads run at once, against the tus server doing the same.
 * Each round starts both servers afresh, one after the other (interleaved, stats.ts), and removes
 * what they stored: one sample each was at the mercy of what the page cache held at that moment
 * (the same build took 11.8-20.8 s for the same uploads on one machine, bench/README.md).
 */
export async function memoryUnderUploads(): Promise<Row[]> {
  const src = makeSource(SIZE, 11);
  const stash: Sample = { idle: [], peak: [] };
  const tus: Sample = { idle: [], peak: [] };
  const record = (into: Sample, got: { idle: number; peak: number; seconds: number }) => {
    into.idle.push(got.idle);
    into.peak.push(got.peak);
    return got.seconds;
  };
  try {
    const seconds = await interleave(
      {
        stash: async () => {
          const server = await startServer();
          try {
            const token = await login(server.apiUrl);
            await setLimit(server.apiUrl, token, 'max_unfinished_size', Math.ceil((PARALLEL * SIZE) / MB) * 2);
            await setLimit(server.apiUrl, token, 'max_unfinished_uploads', PARALLEL * 2);
            return record(stash, await peakWhile(server.pid, () => Promise.all(Array.from({ length: PARALLEL }, (_, i) => stashUpload(server, token, src, `m${i}.bin`)))));
          } finally {
            await server.stop();
            fs.rmSync(server.dataDir, { recursive: true, force: true });
          }
        },
        tus: async () => {
          const tusDir = fs.mkdtempSync(path.join(os.tmpdir(), 'stash-tus-mem-'));
          const server = await startTus(tusDir);
          try {
            return record(tus, await peakWhile(server.pid, () => Promise.all(Array.from({ length: PARALLEL }, () => tusUpload(server.url, src)))));
          } finally {
            await server.stop();
            fs.rmSync(tusDir, { recursive: true, force: true });
          }
        },
      },
      ROUNDS,
    );
    const what = `${PARALLEL} × ${mib(SIZE)} uploads at once, ${ROUNDS} rounds`;
    const summary = (m: Sample, s: number[]) => `peak ${mib(median(m.peak))} (max ${mib(Math.max(...m.peak))}), idle ${mib(median(m.idle))}; ${median(s).toFixed(1)} s (best ${min(s).toFixed(1)})`;
    return [
      {
        benchmark: `server RSS, ${what} (curl)`,
        stash: summary(stash, seconds.stash!),
        baselineName: 'tus server',
        baseline: summary(tus, seconds.tus!),
        ratio: `${(median(stash.peak) / median(tus.peak)).toFixed(2)} × memory, ${(median(seconds.tus!) / median(seconds.stash!)).toFixed(2)} × speed`,
      },
    ];
  } finally {
    fs.rmSync(src.dir, { recursive: true, force: true });
  }
}
