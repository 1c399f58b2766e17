import fs from 'node:fs';

/**
 * Milliseconds of CPU process `pid` has used so far, all its threads (utime + stime of
 * /proc/<pid>/stat, proc(5); clock ticks are USER_HZ, 100 on Linux); null where /proc cannot say
 * (another system, or the process is gone), so callers fall back to the wall clock.
 */
export function processCpuMs(pid: number | undefined): number | null {
  if (pid === undefined) return null;
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after "(comm)", which may itself hold spaces: utime and stime are the 14th and 15th.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ticks = Number(fields[11]) + Number(fields[12]);
    return Number.isFinite(ticks) ? ticks * 10 : null;
  } catch {
    return null;
  }
}
