import fs from 'node:fs';
import { Readable } from 'node:stream';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { PartialWriteError } from '../../../server/storage/storage.ts';
import { S3_AVAILABLE, stopS3Server, warnS3Skipped } from '../../helpers/s3-server.ts';
import { failingSource, openDriver, pattern, readAll, source, type DriverHandle, type DriverName } from './drivers.ts';

/**
 * The Storage contract (server/storage/storage.ts), run on every driver: both must pass the
 * same suite (TEAM.md interfaces). S3 runs when TEST_S3_ENDPOINT is set or moto_server is here.
 */
const DRIVERS: DriverName[] = S3_AVAILABLE ? ['local', 'local-direct', 's3'] : ['local', 'local-direct'];
warnS3Skipped();

const MiB = 1024 * 1024;
const CHUNK = 16 * MiB;
/** The most a driver may under-report (storage.ts). */
const GRANULARITY = 8 * MiB;
const KEY = 'contract-key-0001';

afterAll(stopS3Server);

describe.each(DRIVERS)('Storage contract on %s', (driver) => {
  let handle: DriverHandle | null = null;
  const open = async () => {
    handle = await openDriver(driver, { chunkSize: CHUNK });
    return handle.storage;
  };
  afterEach(async () => {
    await handle?.close();
    handle = null;
  });

  it('stores chunks written out of order at their offsets and finalizes them into one object', async () => {
    const s = await open();
    const file = pattern(2 * CHUNK + 3 * MiB + 17);
    expect(await s.writeAt(KEY, 2 * CHUNK, source(file.subarray(2 * CHUNK)))).toBe(3 * MiB + 17);
    expect(await s.writeAt(KEY, 0, source(file.subarray(0, CHUNK)))).toBe(CHUNK);
    expect(await s.writeAt(KEY, CHUNK, source(file.subarray(CHUNK, 2 * CHUNK)))).toBe(CHUNK);
    expect((await readAll(s.readUnfinished(KEY, CHUNK - 5, CHUNK + 5))).equals(file.subarray(CHUNK - 5, CHUNK + 5))).toBe(true);
    await s.finalize(KEY, file.length);
    expect(await s.stat(KEY)).toEqual({ size: file.length });
    expect((await readAll(s.read(KEY))).equals(file)).toBe(true);
  });

  it('reads inclusive ranges of a stored object: first byte, a span across chunks, the last byte', async () => {
    const s = await open();
    const file = pattern(CHUNK + 1000, 2);
    await s.writeAt(KEY, 0, source(file.subarray(0, CHUNK)));
    await s.writeAt(KEY, CHUNK, source(file.subarray(CHUNK)));
    await s.finalize(KEY, file.length);
    expect((await readAll(s.read(KEY, { start: 0, end: 0 }))).equals(file.subarray(0, 1))).toBe(true);
    expect((await readAll(s.read(KEY, { start: CHUNK - 10, end: CHUNK + 9 }))).equals(file.subarray(CHUNK - 10, CHUNK + 10))).toBe(true);
    const last = file.length - 1;
    expect((await readAll(s.read(KEY, { start: last, end: last }))).equals(file.subarray(last))).toBe(true);
  });

  it('streams a whole file written in one call across chunk boundaries (a single-request upload)', async () => {
    const s = await open();
    const file = pattern(2 * CHUNK + 123, 3);
    expect(await s.writeAt(KEY, 0, source(file))).toBe(file.length);
    await s.finalize(KEY, file.length);
    expect((await readAll(s.read(KEY))).equals(file)).toBe(true);
  });

  it('finalizes an empty object and a one-byte object', async () => {
    const s = await open();
    await s.writeAt(KEY, 0, source(Buffer.alloc(0)));
    await s.finalize(KEY, 0);
    expect(await s.stat(KEY)).toEqual({ size: 0 });
    await s.writeAt('contract-key-0002', 0, source(Buffer.from('x')));
    await s.finalize('contract-key-0002', 1);
    expect((await readAll(s.read('contract-key-0002'))).toString()).toBe('x');
  });

  it('keeps the bytes of a write cut off midway and reports how many in PartialWriteError', async () => {
    const s = await open();
    const file = pattern(CHUNK, 4);
    // Not on a multiple of the local sink's 1 MiB batch: the cut finds pieces still queued for its next write.
    const cut = 9 * MiB + 300_005;
    const err: unknown = await s.writeAt(KEY, CHUNK, failingSource(file.subarray(0, cut))).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PartialWriteError);
    // Every byte that reached the driver is kept, including those it still held queued for its
    // next write when the sender went away: the client resumes after them (storage.ts).
    const written = (err as PartialWriteError).bytesWritten;
    expect(written).toBe(cut);
    expect((await readAll(s.readUnfinished(KEY, CHUNK, CHUNK + written))).equals(file.subarray(0, written))).toBe(true);
  });

  it('takes an async iterable of buffers as its source, and keeps what arrived when the iterable throws', async () => {
    const s = await open();
    const file = pattern(CHUNK, 7);
    const cut = 5 * MiB + 77_777;
    // An upload's metered generator (stream-into-storage.ts) is handed over as it is: a limit it
    // finds crossed is thrown from it, as a sender going away fails a stream.
    async function* pieces(start: number, end: number, fail: boolean): AsyncGenerator<Buffer> {
      for (let at = start; at < end; at += 100_000) yield Buffer.from(file.subarray(at, Math.min(at + 100_000, end)));
      if (fail) throw new Error('over the limit');
    }
    const err: unknown = await s.writeAt(KEY, 0, pieces(0, cut, true)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PartialWriteError);
    expect((err as PartialWriteError).bytesWritten).toBe(cut);
    expect(((err as PartialWriteError).cause as Error).message).toBe('over the limit');
    // The client resumes where the store says it stopped.
    expect(await s.writeAt(KEY, cut, pieces(cut, CHUNK, false))).toBe(CHUNK - cut);
    await s.finalize(KEY, CHUNK);
    expect((await readAll(s.read(KEY))).equals(file)).toBe(true);
  });

  it('storedBytes reports the durable prefix of a cut chunk from the store, never more', async () => {
    const s = await open();
    const file = pattern(CHUNK, 5);
    const cut = 9 * MiB + 5;
    await s.writeAt(KEY, CHUNK, failingSource(file.subarray(0, cut))).catch(() => {});
    const stored = await s.storedBytes(KEY, CHUNK, 2 * CHUNK);
    expect(stored).toBeLessThanOrEqual(cut);
    expect(stored).toBeGreaterThanOrEqual(cut - GRANULARITY);
    expect(stored).toBeGreaterThan(0);
    // Other chunks hold nothing.
    expect(await s.storedBytes(KEY, 0, CHUNK)).toBe(0);
    // A complete chunk reports all of it.
    await s.writeAt(KEY, 0, source(file));
    expect(await s.storedBytes(KEY, 0, CHUNK)).toBe(CHUNK);
  });

  it('a chunk resumed from storedBytes reads back whole and finalizes byte-identical', async () => {
    const s = await open();
    const file = pattern(CHUNK + 4 * MiB, 6);
    await s.writeAt(KEY, 0, failingSource(file.subarray(0, 3 * MiB + 7))).catch(() => {});
    const stored = await s.storedBytes(KEY, 0, CHUNK);
    expect(await s.writeAt(KEY, stored, source(file.subarray(stored, CHUNK)))).toBe(CHUNK - stored);
    await s.writeAt(KEY, CHUNK, source(file.subarray(CHUNK)));
    expect((await readAll(s.readUnfinished(KEY, 0, CHUNK))).equals(file.subarray(0, CHUNK))).toBe(true);
    await s.finalize(KEY, file.length);
    expect((await readAll(s.read(KEY))).equals(file)).toBe(true);
  });

  it('a write resumed earlier than the stored bytes replaces them', async () => {
    const s = await open();
    const old = pattern(CHUNK, 7);
    const fresh = pattern(CHUNK, 8);
    await s.writeAt(KEY, 0, failingSource(old.subarray(0, 10 * MiB))).catch(() => {});
    // Resume at 2 MiB with other bytes: everything from there on is the new write's.
    await s.writeAt(KEY, 2 * MiB, failingSource(fresh.subarray(2 * MiB, 4 * MiB))).catch(() => {});
    const stored = await s.storedBytes(KEY, 0, CHUNK);
    expect(stored).toBeLessThanOrEqual(4 * MiB);
    const back = await readAll(s.readUnfinished(KEY, 0, stored));
    expect(back.equals(Buffer.concat([old.subarray(0, 2 * MiB), fresh.subarray(2 * MiB, stored)]))).toBe(true);
  });

  it('resetRange forgets one chunk and leaves the others', async () => {
    const s = await open();
    const file = pattern(2 * CHUNK, 9);
    await s.writeAt(KEY, 0, source(file.subarray(0, CHUNK)));
    await s.writeAt(KEY, CHUNK, source(file.subarray(CHUNK)));
    await s.resetRange(KEY, CHUNK, 2 * CHUNK);
    expect(await s.storedBytes(KEY, CHUNK, 2 * CHUNK)).toBe(0);
    expect(await s.storedBytes(KEY, 0, CHUNK)).toBe(CHUNK);
    await s.writeAt(KEY, CHUNK, source(file.subarray(CHUNK)));
    await s.finalize(KEY, file.length);
    expect((await readAll(s.read(KEY))).equals(file)).toBe(true);
  });

  it('reports each piece taken once, in order, and never reads one after reporting it (so its owner may free it)', async () => {
    const s = await open();
    const file = pattern(CHUNK + 3 * MiB + 5, 6);
    const reported: Buffer[] = [];
    const given = new Set<ArrayBufferLike>();
    const foreign: number[] = [];
    const taken = (pieces: readonly Buffer[]) => {
      for (const p of pieces) {
        // The very memory the source gave (or a view of it), never a copy: a copy reported as taken
        // leaves the owner's piece unfreed.
        if (!given.has(p.buffer)) foreign.push(p.length);
        reported.push(Buffer.from(p));
        // What an owner freeing the piece leaves behind: a store still reading it would store these.
        p.fill(0xee);
      }
    };
    // Copies: the pieces the store gets are the test's to overwrite, not views of `file`. Four
    // at a time, as a socket delivers them to a parser running behind: several wait queued.
    let next = 0;
    const pieces = new Readable({
      highWaterMark: MiB,
      read() {
        for (let k = 0; k < 4 && next < file.length; k++, next += 65_536) {
          const piece = Buffer.from(file.subarray(next, next + 65_536));
          given.add(piece.buffer);
          this.push(piece);
        }
        if (next >= file.length) this.push(null);
      },
    });
    expect(await s.writeAt(KEY, 0, pieces, { taken })).toBe(file.length);
    expect(Buffer.concat(reported).equals(file)).toBe(true);
    expect(foreign).toEqual([]);
    await s.finalize(KEY, file.length);
    expect((await readAll(s.read(KEY))).equals(file)).toBe(true);
  });

  it('discard drops an unfinished object; discarding a missing key is fine', async () => {
    const s = await open();
    await s.writeAt(KEY, 0, source(pattern(3 * MiB)));
    await s.discard(KEY);
    expect(await s.storedBytes(KEY, 0, CHUNK)).toBe(0);
    await expect(readAll(s.readUnfinished(KEY, 0, 10))).rejects.toThrow();
    await s.discard('contract-never-written');
    // The key starts over cleanly.
    const file = pattern(1000, 10);
    await s.writeAt(KEY, 0, source(file));
    await s.finalize(KEY, 1000);
    expect((await readAll(s.read(KEY))).equals(file)).toBe(true);
  });

  it('delete removes a stored object; stat then answers null; deleting a missing key is fine', async () => {
    const s = await open();
    await s.writeAt(KEY, 0, source(pattern(5000)));
    await s.finalize(KEY, 5000);
    expect(await s.stat(KEY)).toEqual({ size: 5000 });
    const opened = await s.openRead(KEY, { start: 10, end: 19 });
    expect(opened && (await readAll(opened))).toEqual(pattern(5000).subarray(10, 20));
    await s.delete(KEY);
    expect(await s.stat(KEY)).toBeNull();
    await expect(readAll(s.read(KEY))).rejects.toThrow();
    // What the files host asks before it answers: gone is null, not a failure.
    expect(await s.openRead(KEY)).toBeNull();
    await s.delete(KEY);
    expect(await s.stat('contract-never-written')).toBeNull();
  });

  it('the synchronous look-ups the files host makes on every request see a delete at once, however often the object was served', async () => {
    const s = await open();
    // A store that is not files on this machine (S3) offers neither; the files host then awaits stat().
    if (driver === 's3') {
      expect([s.statNow, s.existsNow, s.openStoredNow]).toEqual([undefined, undefined, undefined]);
      return;
    }
    if (!s.statNow || !s.existsNow || !s.openStoredNow) throw new Error('local disk answers look-ups synchronously');
    expect(s.existsNow(KEY)).toBe(false);
    await s.writeAt(KEY, 0, source(pattern(3000)));
    await s.finalize(KEY, 3000);
    for (let i = 0; i < 3; i++) {
      expect(s.statNow(KEY)).toEqual({ size: 3000 });
      expect(s.existsNow(KEY)).toBe(true);
      const fd = s.openStoredNow(KEY);
      expect(fd).not.toBeNull();
      fs.closeSync(fd!);
    }
    await s.delete(KEY);
    expect(s.statNow(KEY)).toBeNull();
    expect(s.existsNow(KEY)).toBe(false);
    expect(s.openStoredNow(KEY)).toBeNull();
    expect(s.statNow('contract-never-written')).toBeNull();
    expect(() => s.statNow!('../escape')).toThrow();
    expect(s.existsNow('../escape')).toBe(false);
  });

  it('refuses a key that could become a path', async () => {
    const s = await open();
    await expect(s.writeAt('../escape', 0, source(Buffer.from('x')))).rejects.toThrow(/invalid storage key/);
  });

  it('ping answers true for a working store', async () => {
    const s = await open();
    expect(await s.ping()).toBe(true);
  });
});
