import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import { afterEach, describe, expect, it } from 'vitest';
import { DEFAULT_METADATA_LIMITS, MetadataPool, PREVIEW_LIMITS } from '../../../server/modules/media/metadata-pool.ts';
import { READER_NICE } from '../../../server/modules/media/spawn-reader.ts';
import { mp4Bytes } from '../files/fixtures/mp4.ts';
import { mp4ManyEmptyBoxes, mp4WithSampleCount, pngBomb } from '../files/fixtures/hostile.ts';

/** Issue 8 item 1: the readers of uploaded bytes, bounded in memory and time, outside the server's process. */
describe('MetadataPool (server/modules/media/metadata-pool.ts)', () => {
  let pool: MetadataPool | null = null;
  afterEach(async () => pool?.close());
  const noReads = () => Promise.resolve(Buffer.alloc(0));

  it('answers null for a task whose reader dies, and starts a new reader for the next task', async () => {
    pool = new MetadataPool();
    const fine = mp4Bytes({ video: [{ width: 640, height: 360 }], mdatBytes: 400 * 1024, moovAtEnd: true });
    const head = fine.subarray(0, 256 * 1024);
    // The reader asks for the moov; while it waits, it dies (as an out-of-memory abort would end it).
    let asked: () => void = () => {};
    const askedForRange = new Promise<void>((resolve) => (asked = resolve));
    const neverAnswers = () => {
      asked();
      return new Promise<Buffer>(() => {});
    };
    const pending = pool.videoSize('video/mp4', head, fine.length, neverAnswers);
    await askedForRange;
    const [pid] = pool.readerPids();
    process.kill(pid as number, 'SIGKILL');
    expect(await pending).toBeNull();
    const read = async (start: number, end: number) => fine.subarray(start, end);
    expect(await pool.videoSize('video/mp4', head, fine.length, read)).toEqual({ width: 640, height: 360 });
    expect(pool.readerPids()).not.toContain(pid);
  });

  it('reads the crafted MP4 of issue 8 (20 bytes claiming 2^32-1 samples) at once', async () => {
    pool = new MetadataPool();
    const hostile = mp4WithSampleCount(0xffffffff);
    expect(await pool.videoSize('video/mp4', hostile, hostile.length, noReads)).toEqual({ width: 320, height: 240 });
  });

  it('ends a task past its busy time, but does not count the time spent waiting for range reads', async () => {
    // One reader and a tight budget, against a parse that takes over a second (100,000 empty boxes).
    pool = new MetadataPool({ ...DEFAULT_METADATA_LIMITS, workers: 1, busyMs: 30 });
    const slow = mp4ManyEmptyBoxes(100_000);
    const warm = mp4Bytes({ video: [{ width: 16, height: 16 }], mdatBytes: 8 });
    await pool.kind(warm, warm.length);
    const [reader] = pool.readerPids();
    expect(await pool.videoSize('video/mp4', slow, slow.length, noReads)).toBeNull();
    // Null because its reader was ended at the deadline, not because the parse gave up.
    expect(pool.readerPids()).not.toContain(reader);

    // A moov past the head, from a store taking 1.5 s per read: past a 1 s budget in all, still answered.
    await pool.close();
    pool = new MetadataPool({ ...DEFAULT_METADATA_LIMITS, workers: 1, busyMs: 1_000 });
    const file = mp4Bytes({ video: [{ width: 1280, height: 720 }], mdatBytes: 400 * 1024, moovAtEnd: true });
    const head = file.subarray(0, 256 * 1024);
    await pool.kind(warm, warm.length);
    const slowStore = async (start: number, end: number) => {
      await new Promise((r) => setTimeout(r, 1_500));
      return file.subarray(start, end);
    };
    expect(await pool.videoSize('video/mp4', head, file.length, slowStore)).toEqual({ width: 1280, height: 720 });
  });

  it('counts the CPU its reader used, not the time it waited for a core', async () => {
    // A machine busy with other work, made certain: the reader is stopped for three budgets.
    pool = new MetadataPool({ ...DEFAULT_METADATA_LIMITS, workers: 1, busyMs: 300 });
    const png = pngBomb(300, 200, 0);
    expect(await pool.kind(png, png.length)).toMatchObject({ mime: 'image/png', width: 300, height: 200 });
    const [reader] = pool.readerPids();
    process.kill(reader as number, 'SIGSTOP');
    const pending = pool.kind(png, png.length);
    await new Promise((r) => setTimeout(r, 900));
    process.kill(reader as number, 'SIGCONT');
    expect(await pending).toMatchObject({ mime: 'image/png', width: 300, height: 200 });
    expect(pool.readerPids()).toContain(reader);
  });

  it('forks the reader of the up-to-date server build in tests, not the sources under tsx', async () => {
    // tests/server/global-setup.ts: a start under tsx cost the suite ~0.5 s of CPU per reader.
    pool = new MetadataPool({ ...DEFAULT_METADATA_LIMITS, workers: 1 });
    const png = pngBomb(30, 20, 0);
    const pending = pool.kind(png, png.length);
    const [reader] = pool.readerPids();
    const argv = fs.readFileSync(`/proc/${reader}/cmdline`, 'utf8').split('\0');
    expect(argv).toContain(path.resolve(import.meta.dirname, '../../../dist-server/server/metadata-worker.mjs'));
    expect(argv.join(' ')).not.toContain('tsx');
    expect(await pending).toMatchObject({ mime: 'image/png', width: 30, height: 20 });
  });

  it("starts its reader at the server's priority and gives it uploaded bytes at a lower one", async () => {
    // A reader loading its parsers at nice 19 on a busy machine waited past its start deadline
    // for a core; the bytes it parses are what must yield to the server (issue 8).
    pool = new MetadataPool({ ...DEFAULT_METADATA_LIMITS, workers: 1 });
    const png = pngBomb(300, 200, 0);
    const pending = pool.kind(png, png.length);
    const [reader] = pool.readerPids();
    expect(os.getPriority(reader)).toBe(os.getPriority());
    expect(await pending).toMatchObject({ mime: 'image/png', width: 300, height: 200 });
    expect(os.getPriority(reader)).toBe(READER_NICE);
  });

  it('starts a previews reader with libvips loaded, so a photo is rendered at the lower priority without loading it', async () => {
    // Loading libvips is three times a photo's render in CPU: at nice 19 on a busy machine a
    // render that began with it took 40 s (and ran past the suite's 60 s once in CI).
    pool = new MetadataPool(PREVIEW_LIMITS);
    const png = await sharp({ create: { width: 1000, height: 800, channels: 3, background: { r: 40, g: 120, b: 200 } } }).png().toBuffer();
    const pending = pool.previews(png.length, async (start, end) => png.subarray(start, end));
    const [reader] = pool.readerPids();
    // The pool lowers the priority as the reader says it is ready, and sends the photo then.
    while (os.getPriority(reader) !== READER_NICE) await new Promise((resolve) => setImmediate(resolve));
    expect(fs.readFileSync(`/proc/${reader}/maps`, 'utf8')).toContain('libvips');
    expect(await pending).toMatchObject([{ width: 160 }, { width: 320 }, { width: 640 }]);
  });

  it('does not load libvips into the readers that only sniff types and sizes', async () => {
    pool = new MetadataPool({ ...DEFAULT_METADATA_LIMITS, workers: 1 });
    const png = pngBomb(300, 200, 0);
    expect(await pool.kind(png, png.length)).toMatchObject({ mime: 'image/png' });
    const [reader] = pool.readerPids();
    expect(fs.readFileSync(`/proc/${reader}/maps`, 'utf8')).not.toContain('libvips');
  });
});
