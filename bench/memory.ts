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
// One round in --quick: each waits up to SETTLE_MS per server for the idle reading.
const ROUNDS = options.quick ? 1 : 3;

/**
 * A server left alone shrinks by itself: V8's memory reducer runs ~8 s after start, or ~16 s when
 * it finds the process still busy the first time (a compacting collection that gives back the
 * start's garbage and most of the young generation's pages; the compiled server ~85 → ~75 MiB,
 * bench/README.md). "Idle" is what a server holds once that has happened, as `ps` shows it on a
 * quiet host: read after the resident size has dropped by 5 % and the reducer's burst of
 * collections is over, or after SETTLE_MS. "Started" is a second after it answered.
 */
const SETTLE_MS = 25_000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** One server's round: resident sizes in bytes, and how long the uploads took. */
interface Reading {
  started: number;
  idle: number;
  peak: number;
  seconds: number;
}

/** Resident size just after start and once idle, then the peak while `work` runs (sampled every 50 ms and the kernel's high-water mark). */
async function peakWhile(pid: number, work: () => Promise<unknown>): Promise<Reading> {
  await sleep(1000);
  const started = memoryOf(pid).rss;
  const deadline = Date.now() + SETTLE_MS;
  while (Date.now() < deadline && memoryOf(pid).rss > started * 0.95) await sleep(250);
  await sleep(2000);
  const idle = memoryOf(pid).rss;
  let peak = idle;
  const sampler = setInterval(() => (peak = Math.max(peak, memoryOf(pid).rss)), 50);
  const t0 = performance.now();
  await work();
  const seconds = (performance.now() - t0) / 1000;
  clearInterval(sampler);
  return { started, idle, peak: Math.max(peak, memoryOf(pid).peak), seconds };
}

interface Sample {
  started: number[];
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
  const stash: Sample = { started: [], idle: [], peak: [] };
  const tus: Sample = { started: [], idle: [], peak: [] };
  const record = (into: Sample, got: Reading) => {
    into.started.push(got.started);
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
    const what = `${PARALLEL} × ${mib(SIZE)} uploads at once, ${ROUNDS} round${ROUNDS > 1 ? 's' : ''}`;
    const summary = (m: Sample, s: number[]) => `peak ${mib(median(m.peak))} (max ${mib(Math.max(...m.peak))}), idle ${mib(median(m.idle))} (${mib(median(m.started))} a second after start); ${median(s).toFixed(1)} s (best ${min(s).toFixed(1)})`;
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
