import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import { afterEach, describe, expect, it } from 'vitest';
import type { FileRecord } from '../../../contract/files.ts';
import { leasedReclaim } from '../../../server/jobs.ts';
import { PREVIEW_INTENT_SECONDS } from '../../../server/modules/files/doomed-bytes.ts';
import { nowSeconds } from '../../../server/lib/ids.ts';
import { LocalStorage } from '../../../server/storage/local.ts';
import { STORE_UNAVAILABLE, StorageError, type Storage } from '../../../server/storage/storage.ts';
import { localProbe, type StoreProbe } from '../../helpers/store-probe.ts';
import { DIALECTS } from '../../helpers/test-app.ts';
import { createHttpTestApp, sendMultipart, type HttpTestApp } from '../../helpers/upload.ts';

/**
 * A preview's key: its file's 24-character key (`newSecret(18)`), then `p<width>_` and a 6-character
 * tag (preview-queue.ts). Written out whole: a file's own random key ends like `p7_aB3` about once
 * in a thousand uploads, and was then counted as a preview.
 */
const PREVIEW_KEY = /^[A-Za-z0-9_-]{24}p(\d+)_[A-Za-z0-9_-]{6}$/;

/**
 * Local disk whose renderer can be held just before its widest preview is finalized (that one is
 * written, not yet stored: what a kill at that moment leaves), and which can refuse to delete
 * preview objects (a store that is down when the renderer cleans up after itself).
 */
class HeldStore extends LocalStorage implements Storage {
  readonly previewKeys: string[] = [];
  refusing = false;
  private held: { reached: () => void; release: Promise<void> } | null = null;

  /** Holds the next renderer before its 640 px preview is finalized; resolves once it is there. */
  hold(release: Promise<void>): Promise<void> {
    return new Promise((reached) => (this.held = { reached, release }));
  }

  override writeAt(...args: Parameters<LocalStorage['writeAt']>): Promise<number> {
    if (PREVIEW_KEY.test(args[0])) this.previewKeys.push(args[0]);
    return super.writeAt(...args);
  }

  override async finalize(key: string, size: number): Promise<void> {
    const held = this.held;
    if (held && PREVIEW_KEY.exec(key)?.[1] === '640') {
      this.held = null;
      held.reached();
      await held.release;
    }
    return super.finalize(key, size);
  }

  override discard(key: string): Promise<void> {
    return this.refusing && PREVIEW_KEY.test(key) ? Promise.reject(new StorageError(503, STORE_UNAVAILABLE, 'SlowDown')) : super.discard(key);
  }

  override delete(key: string): Promise<void> {
    return this.refusing && PREVIEW_KEY.test(key) ? Promise.reject(new StorageError(503, STORE_UNAVAILABLE, 'SlowDown')) : super.delete(key);
  }
}

function picture(width: number, height: number): Promise<Buffer> {
  return sharp({ create: { width, height, channels: 3, background: { r: 40, g: 120, b: 200 } } }).png().toBuffer();
}

/** Renderers held by a test, let go after it whatever it found (the app's close waits for its queue). */
const gates: (() => void)[] = [];

function gate(): { promise: Promise<void>; open: () => void; fail: (err: Error) => void } {
  let open!: () => void;
  let fail!: (err: Error) => void;
  const promise = new Promise<void>((resolve, reject) => ((open = resolve), (fail = reject)));
  // A renderer that never reached its gate leaves this rejection to nobody: the test's failure says why.
  promise.catch(() => {});
  gates.push(() => fail(new Error('the test ended')));
  return { promise, open, fail };
}

describe.each(DIALECTS)('preview objects are listed as doomed until recorded on %s (issue 11 item 9)', (dialect) => {
  let t: HttpTestApp;
  let root: string;
  let store: HeldStore;
  let probe: StoreProbe;
  afterEach(async () => {
    for (const end of gates.splice(0)) end();
    await t?.close();
    fs.rmSync(root, { recursive: true, force: true });
  });

  async function start(): Promise<{ token: string }> {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'stash-preview-intents-'));
    store = new HeldStore(path.join(root, 'storage'));
    probe = localProbe(root);
    t = await createHttpTestApp(dialect, { storage: store });
    return t.createUser();
  }

  async function upload(user: { token: string }, name: string): Promise<FileRecord> {
    const res = await sendMultipart(`${t.apiUrl}/api/v1/files/upload`, { fields: { token: user.token, originalname: name }, file: { data: await picture(1000, 800) } });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body.file as FileRecord;
  }

  /** Preview objects anywhere in the store: stored ones, and unfinished ones (a preview half written). */
  const previewObjects = async () => [...(await probe.storedKeys()), ...(await probe.partialKeys())].filter((k) => PREVIEW_KEY.test(k)).sort();
  const doomedPreviewKeys = async () => (await t.deps.db.selectFrom('doomed_bytes').select('storage_key').execute()).map((r) => r.storage_key).filter((k) => PREVIEW_KEY.test(k)).sort();
  const recorded = async (actualName: string) => (await t.deps.db.selectFrom('files').select('previews').where('actual_name', '=', actualName).executeTakeFirst())?.previews;
  /**
   * Waits for the renderer to be held at its 640 px preview; one that ended without getting there
   * (a reader that died or ran out of time) fails the test with what it recorded, not a timeout.
   */
  async function heldRenderer(reached: Promise<void>, file: FileRecord): Promise<void> {
    let held = false;
    const ended = t.deps.previews.idle().then(async () => {
      if (!held) throw new Error(`the renderer ended without reaching its 640 px preview; recorded: ${String(await recorded(file.actual_name))}`);
    });
    await Promise.race([reached.then(() => (held = true)), ended]);
  }
  /** The periodic reclaim of another api process (jobs.ts), as it runs `seconds` from now. */
  const periodicReclaim = (seconds: number) => leasedReclaim(t.deps, () => false, nowSeconds() + seconds, `api-${seconds}`);

  it('a renderer killed after writing its previews leaves none once the periodic reclaim has run', async () => {
    const user = await start();
    const killed = gate();
    const reached = store.hold(killed.promise);
    const file = await upload(user, 'killed.png');
    await heldRenderer(reached, file);
    // What a SIGKILL here leaves: 160 and 320 stored, 640 written but not finalized, nothing recorded.
    expect(store.previewKeys).toHaveLength(3);
    expect(await previewObjects()).toHaveLength(3);
    expect(await recorded(file.actual_name)).toBeNull();

    // Another process's reclaim, once the renderer's keys are due, finds them.
    expect(await periodicReclaim(PREVIEW_INTENT_SECONDS + 1)).toMatchObject({ failed: 0 });
    expect(await previewObjects()).toEqual([]);
    expect(await doomedPreviewKeys()).toEqual([]);

    // The held renderer never records previews whose objects are gone; a later backfill makes new ones.
    killed.fail(new Error('killed'));
    await t.deps.previews.idle();
    expect(await recorded(file.actual_name)).toBeNull();
    await t.deps.previews.backfill();
    await t.deps.previews.idle();
    const made = (JSON.parse((await recorded(file.actual_name)) ?? '[]') as { width: number }[]).map((p) => p.width);
    expect(made).toEqual([160, 320, 640]);
    expect(await previewObjects()).toHaveLength(3);
  });

  it('a renderer whose file was deleted meanwhile and whose cleanup the store refused leaves none after the reclaim', async () => {
    const user = await start();
    const release = gate();
    const reached = store.hold(release.promise);
    const file = await upload(user, 'deleted.png');
    await heldRenderer(reached, file);
    expect((await t.call('/api/v1/files/delete', { token: user.token, filePath: file.url })).status).toBe(200);
    store.refusing = true;
    release.open();
    await t.deps.previews.idle();
    // The record lost (no row) and the store refused the renderer's own deletes: the objects are there.
    expect(await recorded(file.actual_name)).toBeUndefined();
    expect(await previewObjects()).toHaveLength(3);

    // The next periodic pass, at once (the loser made its keys due), once the store answers again.
    store.refusing = false;
    expect(await periodicReclaim(1)).toMatchObject({ failed: 0 });
    expect(await previewObjects()).toEqual([]);
    expect(await doomedPreviewKeys()).toEqual([]);
  });

  it('never reclaims a live render: its keys wait, and the record unlists them in the same transaction', async () => {
    const user = await start();
    const release = gate();
    const reached = store.hold(release.promise);
    const file = await upload(user, 'live.png');
    await heldRenderer(reached, file);
    // Listed before a byte was written, and not yet due.
    expect(await doomedPreviewKeys()).toEqual([...store.previewKeys].sort());
    expect(await periodicReclaim(0)).toMatchObject({ failed: 0 });
    expect(await periodicReclaim(PREVIEW_INTENT_SECONDS - 60)).toMatchObject({ failed: 0 });
    expect(await previewObjects()).toHaveLength(3);
    expect(await doomedPreviewKeys()).toHaveLength(3);

    release.open();
    await t.deps.previews.idle();
    const made = JSON.parse((await recorded(file.actual_name)) ?? '[]') as { width: number }[];
    expect(made.map((p) => p.width)).toEqual([160, 320, 640]);
    expect(await doomedPreviewKeys()).toEqual([]);
    // Recorded, they are the file's: no reclaim, however late, takes them.
    await periodicReclaim(10 * PREVIEW_INTENT_SECONDS);
    expect(await previewObjects()).toEqual([...store.previewKeys].sort());
    for (const key of store.previewKeys) expect(await t.deps.storage.stat(key)).not.toBeNull();

    // And they still go with the file.
    expect((await t.call('/api/v1/files/delete', { token: user.token, filePath: file.url })).status).toBe(200);
    expect(await previewObjects()).toEqual([]);
  });

  it('records nothing when a render outlasted its keys and a reclaim took them', async () => {
    const user = await start();
    const release = gate();
    const reached = store.hold(release.promise);
    const file = await upload(user, 'slow.png');
    await heldRenderer(reached, file);
    expect(await periodicReclaim(PREVIEW_INTENT_SECONDS + 1)).toMatchObject({ failed: 0 });
    release.open();
    await t.deps.previews.idle();
    // Recording them would list previews whose objects are gone.
    expect(await recorded(file.actual_name)).toBeNull();
    expect(await previewObjects()).toEqual([]);
    expect(await doomedPreviewKeys()).toEqual([]);
  });
});
