import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { LocalStorage } from '../../../server/storage/local.ts';
import { PartialWriteError } from '../../../server/storage/storage.ts';
import { canMountSmallDisks, freeBytes, mountSmallDisk, unmountSmallDisk } from '../../helpers/small-disk.ts';
import { pattern, readAll, source } from './drivers.ts';

/**
 * Issue 8's full disk, for real: a small tmpfs (it takes O_DIRECT on Linux 6.6 and later, so
 * the direct writer meets ENOSPC itself, mid-slot) filled until an upload's write fails. The
 * HTTP answer (507) is disk-full.test.ts's; this is what the store keeps and reports.
 */
const KiB = 1024;
const MiB = 1024 * KiB;
const DISK = 4 * MiB;

const canMount = canMountSmallDisks('full-disk.test.ts');
const mounted: string[] = [];
afterEach(() => {
  for (const dir of mounted.splice(0)) unmountSmallDisk(dir);
});

describe.skipIf(!canMount).each([true, false])('a disk that fills during a write (direct writes: %s)', (directWrites) => {
  it('reports ENOSPC with every byte it stored, keeps them, and the resume completes once room is made', async () => {
    const root = mountSmallDisk(DISK)!;
    mounted.push(root);
    const storage = new LocalStorage(root, { directWrites });
    expect(await storage.writesDirect()).toBe(directWrites);
    // About 1.5 MiB left for the upload.
    const filler = path.join(root, 'filler');
    fs.writeFileSync(filler, Buffer.alloc(DISK - 1.5 * MiB));
    const data = pattern(3 * MiB + 123, 11);

    const error = await storage.writeAt('full-disk-1', 0, source(data)).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PartialWriteError);
    const { bytesWritten, cause } = error as PartialWriteError;
    expect((cause as { code?: string }).code).toBe('ENOSPC');
    // What is reported is what a resume may rely on: on disk, in place, and known after a restart too.
    expect(await storage.storedBytes('full-disk-1', 0, data.length)).toBe(bytesWritten);
    expect((await readAll(storage.readUnfinished('full-disk-1', 0, bytesWritten))).equals(data.subarray(0, bytesWritten))).toBe(true);
    // Everything the disk took before it filled (the progress file has one of its pages), not only
    // the last checkpoint's bytes (8 MiB, or 250 ms, back), nor only the slots written whole.
    expect(freeBytes(root)).toBeLessThan(8 * KiB);
    expect(bytesWritten).toBeGreaterThanOrEqual(1.5 * MiB - 8 * KiB);

    fs.rmSync(filler);
    expect(await storage.writeAt('full-disk-1', bytesWritten, source(data.subarray(bytesWritten)))).toBe(data.length - bytesWritten);
    expect((await readAll(storage.readUnfinished('full-disk-1', 0, data.length))).equals(data)).toBe(true);
  });
});
