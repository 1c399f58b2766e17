import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/**
 * A tmpfs of a few MiB, for a disk that really fills (issue 8's full disk): writes fail with the
 * kernel's own ENOSPC, direct ones included (tmpfs takes O_DIRECT on Linux 6.6 and later).
 * Mounting takes root: CI runs as root and must be able to; a developer's machine without it
 * skips these tests, loudly.
 */
export function mountSmallDisk(bytes: number): string | null {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'stash-small-disk-'));
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${bytes},mode=0700`, 'tmpfs', dir], { stdio: 'ignore' });
    return dir;
  } catch {
    fs.rmdirSync(dir);
    return null;
  }
}

export function unmountSmallDisk(dir: string): void {
  execFileSync('umount', [dir]);
  fs.rmdirSync(dir);
}

/** Whether this process can mount one; throws in CI when it cannot, so CI never skips these. */
export function canMountSmallDisks(suite: string): boolean {
  const probe = mountSmallDisk(64 * 1024);
  if (probe) {
    unmountSmallDisk(probe);
    return true;
  }
  if (process.env.CI) throw new Error(`${suite}: CI must be able to mount a tmpfs (run as root)`);
  console.warn(`!!! ${suite} SKIPPED: mounting a tmpfs needs root`);
  return false;
}

/** Bytes a non-root writer may still use on the filesystem holding `dir`. */
export function freeBytes(dir: string): number {
  const { bavail, bsize } = fs.statfsSync(dir);
  return bavail * bsize;
}
