import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import sharp from 'sharp';
import { afterEach, describe, expect, it } from 'vitest';
import type { FileRecord } from '../../../contract/files.ts';
import { leasedPreviewBackfill, startBackgroundJobs } from '../../../server/jobs.ts';
import { nowSeconds } from '../../../server/lib/ids.ts';
import { PREVIEW_LIMITS, type MetadataLimits } from '../../../server/modules/media/metadata-pool.ts';
import { PREVIEWS_READER } from '../../../server/modules/media/metadata-protocol.ts';
import { LocalStorage } from '../../../server/storage/local.ts';
import { STORE_UNAVAILABLE, StorageError, type Storage } from '../../../server/storage/storage.ts';
import { childPids } from '../../helpers/server-process.ts';
import { DIALECTS } from '../../helpers/test-app.ts';
import { createHttpTestApp, sendMultipart, type HttpTestApp } from '../../helpers/upload.ts';

/**
 * A store that fails reads past the first MiB while `failing`, as S3 does when it throttles
 * (503 SlowDown) or drops a connection. The upload reads only its 256 KiB head; the previews
 * reader asks for the file a MiB at a time, so only its second read fails.
 */
class FlakyReads extends LocalStorage implements Storage {
  failing = true;

  override read(key: string, range?: { start: number; end: number }): Readable {
    if (this.failing && range && range.start >= 1024 * 1024) {
      return new Readable({ read() { this.destroy(new StorageError(503, STORE_UNAVAILABLE, 'SlowDown')); } });
    }
    return super.read(key, range);
  }
}

/**
 * A store whose reads past the first MiB send nothing while `stalling` (an S3 that is slow, not
 * failing), until `release()` lets the waiting ones go on.
 */
class StallingReads extends LocalStorage implements Storage {
  stalling = true;
  private readonly waiting: (() => void)[] = [];

  override read(key: string, range?: { start: number; end: number }): Readable {
    if (!this.stalling || !range || range.start < 1024 * 1024) return super.read(key, range);
    const later = () => super.read(key, range);
    const gate = new Promise<void>((resolve) => this.waiting.push(resolve));
    return Readable.from((async function* () {
      await gate;
      yield* later();
    })());
  }

  release(): void {
    this.stalling = false;
    for (const go of this.waiting.splice(0)) go();
  }
}

/**
 * A store whose first read past the first MiB stops the previews reader (SIGSTOP) before it
 * answers, while `stopping`: a reader that gets no core (a low priority on a machine kept busy), the
 * store answering at once. The pool's deadline then ends it (SIGKILL ends a stopped process too).
 */
class StarvingReads extends LocalStorage implements Storage {
  stopping = true;

  override read(key: string, range?: { start: number; end: number }): Readable {
    if (this.stopping && range && range.start >= 1024 * 1024) {
      this.stopping = false;
      for (const pid of previewReaderPids()) process.kill(pid, 'SIGSTOP');
    }
    return super.read(key, range);
  }
}

/** This process's previews readers (metadata-pool.ts starts them with PREVIEWS_READER). */
function previewReaderPids(): number[] {
  return childPids(process.pid).filter((pid) => {
    try {
      return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').includes(PREVIEWS_READER);
    } catch {
      return false; // ended meanwhile
    }
  });
}

/** A PNG of a few MiB (noise, stored uncompressed), so the reader needs several range reads. */
function largePng(width: number, height: number): Promise<Buffer> {
  const pixels = Buffer.alloc(width * height * 3);
  for (let i = 0; i < pixels.length; i++) pixels[i] = (i * 7919) % 251;
  return sharp(pixels, { raw: { width, height, channels: 3 } }).png({ compressionLevel: 0 }).toBuffer();
}

/** What `files.previews` holds for a file: NULL (not made yet), `[]` (none) or its previews. */
async function recordedPreviews(t: HttpTestApp, actualName: string) {
  return (await t.deps.db.selectFrom('files').select('previews').where('actual_name', '=', actualName).executeTakeFirstOrThrow()).previews;
}

async function uploadImage(t: HttpTestApp, user: { token: string }, data: Buffer, name: string): Promise<FileRecord> {
  const res = await sendMultipart(`${t.apiUrl}/api/v1/files/upload`, { fields: { token: user.token, originalname: name }, file: { data } });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.file as FileRecord;
}

/** The widths of a file's recorded previews; undefined while none are recorded. */
async function previewWidths(t: HttpTestApp, actualName: string): Promise<number[] | undefined> {
  return (JSON.parse((await recordedPreviews(t, actualName)) ?? 'null') as { width: number }[] | null)?.map((p) => p.width);
}

/**
 * Uploads a photo whose previews render fails (the store, or the reader's deadline): its row must
 * stay NULL, not "[]", which would say the image has none, for good. Then `letGo()` ends the
 * failure and the backfill makes its previews.
 */
async function failsThenBackfills(t: HttpTestApp, letGo: () => void): Promise<void> {
  const user = await t.createUser();
  const png = await largePng(1200, 900);
  expect(png.length).toBeGreaterThan(2 * 1024 * 1024);
  const file = await uploadImage(t, user, png, 'photo.png');
  expect(file.mime_type).toBe('image/png');

  await t.deps.previews.idle();
  expect(await recordedPreviews(t, file.actual_name)).toBeNull();

  letGo();
  await t.deps.previews.backfill();
  await t.deps.previews.idle();
  expect(await previewWidths(t, file.actual_name)).toEqual([160, 320, 640]);
}

describe.each(DIALECTS)('previews after a store failure on %s (issue 11 item 9)', (dialect) => {
  let t: HttpTestApp;
  let root: string;
  afterEach(async () => {
    await t?.close();
    fs.rmSync(root, { recursive: true, force: true });
  });

  it('records nothing for an image whose read the store failed, and a later backfill makes its previews', async () => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'stash-previews-'));
    const store = new FlakyReads(root);
    t = await createHttpTestApp(dialect, { storage: store });
    await failsThenBackfills(t, () => { store.failing = false; });
  });

  it('backfills images left without previews once per period across api processes, not only at a start', async () => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'stash-previews-'));
    const store = new FlakyReads(root);
    t = await createHttpTestApp(dialect, { storage: store });
    const user = await t.createUser();
    const file = await uploadImage(t, user, await largePng(1200, 900), 'later.png');
    await t.deps.previews.idle();
    store.failing = false;

    // A process that stops lets go of the lease, so the one started next backfills at once
    // (the stopped one's tick took it, or tried to while another held it).
    await startBackgroundJobs(t.deps)();
    const now = nowSeconds();
    // Two api processes' ticks of one period: one pass, so the image is not rendered twice.
    const [first, second] = await Promise.all([leasedPreviewBackfill(t.deps, now, 'api-1'), leasedPreviewBackfill(t.deps, now, 'api-2')]);
    expect([first, second].sort()).toEqual([false, true]);
    await t.deps.previews.backfill();
    await t.deps.previews.idle();
    expect(await previewWidths(t, file.actual_name)).toEqual([160, 320, 640]);
    // The next period's tick runs again.
    expect(await leasedPreviewBackfill(t.deps, now + 600, 'api-2')).toBe(true);
  });
});

// What the queue does with a deadline passed is the same on both databases.
describe('previews after the reader’s deadline passed', () => {
  /** 120 s in production: 2 s for the render that must run out, then the real one for the backfill's. */
  const shortDeadline = (): MetadataLimits => ({ ...PREVIEW_LIMITS, totalMs: 2_000 });

  let t: HttpTestApp | undefined;
  let store: StallingReads | undefined;
  let root: string;
  afterEach(async () => {
    store?.release();
    store = undefined;
    await t?.close();
    fs.rmSync(root, { recursive: true, force: true });
  });

  /** A previews render past a 2 s deadline on `slowStore`; `letGo()` ends the slowness and the deadline goes back to 120 s. */
  async function runsOutThenBackfills(slowStore: LocalStorage, letGo: () => void): Promise<void> {
    const limits = shortDeadline();
    t = await createHttpTestApp('sqlite', { storage: slowStore, previewLimits: limits });
    await failsThenBackfills(t, () => {
      letGo();
      limits.totalMs = PREVIEW_LIMITS.totalMs;
    });
  }

  it('records nothing when the reader’s deadline passed while the store had not answered, and a later backfill makes its previews', async () => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'stash-previews-'));
    const stalling = (store = new StallingReads(root));
    // The image was never judged, the store was.
    await runsOutThenBackfills(stalling, () => stalling.release());
  });

  it('records nothing when the reader got no core until its deadline passed, and a later backfill makes its previews', async () => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'stash-previews-'));
    const starving = new StarvingReads(root);
    // The image used none of its CPU budget; the machine was judged, not the image. (On a machine
    // this busy already, the deadline may pass before the reader is stopped: the same case.)
    await runsOutThenBackfills(starving, () => { starving.stopping = false; });
  });

  it('holds the backfill’s lease while its images are still rendering, so another process starts no second pass', async () => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'stash-previews-'));
    store = new StallingReads(root);
    t = await createHttpTestApp('sqlite', { storage: store });
    const user = await t.createUser();
    const file = await uploadImage(t, user, await largePng(1200, 900), 'backlog.png');

    // A pass whose lease was taken 500 s ago, its image still rendering: without a renewal its
    // lease would run out 70 s from now, before another process's next tick.
    const now = nowSeconds();
    expect(await leasedPreviewBackfill(t.deps, now - 500, 'api-1', 50)).toBe(true);
    const expiresAt = async () => (await t!.deps.db.selectFrom('job_leases').select('expires_at').where('name', '=', 'backfill-previews').executeTakeFirstOrThrow()).expires_at;
    await expect.poll(expiresAt, { timeout: 10_000 }).toBeGreaterThanOrEqual(now + 500);
    expect(await leasedPreviewBackfill(t.deps, now + 300, 'api-2')).toBe(false);
    // Its own process's next tick goes on (its queue may only be busy with new uploads).
    expect(await leasedPreviewBackfill(t.deps, now + 300, 'api-1')).toBe(true);

    store.release();
    await t.deps.previews.idle();
    expect(await previewWidths(t, file.actual_name)).toEqual([160, 320, 640]);
  });
});
