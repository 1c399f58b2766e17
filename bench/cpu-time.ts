import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { median } from './stats.ts';

/**
 * CPU time from /proc (Linux), to show in a row where a contender's time goes: on this 2-core
 * machine a client that burns CPU takes it from the server beside it (bench/README.md, browser
 * upload). Clock ticks are USER_HZ, 100 on every Linux this runs on.
 */
const TICK_SECONDS = 1 / 100;

function ticksOf(stat: string): { own: number; children: number } {
  // Fields after "(comm)": utime is the 14th field of the line, cutime the 16th (proc(5)).
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return { own: Number(f[11]) + Number(f[12]), children: Number(f[13]) + Number(f[14]) };
}

/** CPU seconds used so far by one process (all its threads), 0 once it is gone. */
export function processCpu(pid: number): number {
  try {
    return ticksOf(fs.readFileSync(`/proc/${pid}/stat`, 'utf8')).own * TICK_SECONDS;
  } catch {
    return 0;
  }
}

/**
 * CPU seconds of every running process whose program (the first word of its command line, which
 * Chromium rewrites with spaces) has `name` in its file name: Debian's /usr/bin/chromium is a
 * script that starts /usr/lib/chromium/chromium.
 */
export function cpuOfProgram(name: string): number {
  let ticks = 0;
  for (const pid of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      const program = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split(/[\0 ]/)[0] ?? '';
      if (!path.basename(program).includes(name)) continue;
      ticks += ticksOf(fs.readFileSync(`/proc/${pid}/stat`, 'utf8')).own;
    } catch {
      // Gone between the listing and the read.
    }
  }
  return ticks * TICK_SECONDS;
}

/**
 * CPU seconds used so far by a process and every process below it that is still running: the
 * server's type readers (issue 8) are children that live as long as it does, so they never
 * count among its ended children.
 */
export function processTreeCpu(pid: number): number {
  const parents = new Map<number, number>();
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
      parents.set(Number(entry), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
    } catch {
      // Gone between the listing and the read.
    }
  }
  const below = (p: number): number[] => [...parents].filter(([, parent]) => parent === p).flatMap(([child]) => [child, ...below(child)]);
  return [pid, ...below(pid)].reduce((sum, p) => sum + processCpu(p), 0);
}

/** CPU seconds of this process's children that have ended and been waited for (each curl). */
export function endedChildrenCpu(): number {
  return ticksOf(fs.readFileSync('/proc/self/stat', 'utf8')).children * TICK_SECONDS;
}

/**
 * Runs `run` and adds to each meter's samples the CPU seconds its reading grew by meanwhile.
 * Where /proc is missing nothing is read and the samples stay empty (rows then leave CPU out).
 */
export async function withCpu<T>(meters: [samples: number[], read: () => number][], run: () => Promise<T>): Promise<T> {
  if (!canMeasureCpu) return run();
  const before = meters.map(([, read]) => read());
  const result = await run();
  meters.forEach(([samples, read], i) => samples.push(read() - before[i]!));
  return result;
}

/** The median of a contender's CPU seconds, as a row shows it. */
export function cpuSummary(samples: number[]): string {
  return `${median(samples).toFixed(1)} s`;
}

export const canMeasureCpu = os.platform() === 'linux' && fs.existsSync('/proc/self/stat');
