import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { LocalStorage } from '../../../server/storage/local.ts';
import type { Storage } from '../../../server/storage/storage.ts';
import { canMountSmallDisks, freeBytes, mountSmallDisk, unmountSmallDisk } from '../../helpers/small-disk.ts';
import { DIALECTS, type TestUser } from '../../helpers/test-app.ts';
import { createHttpTestApp, postJson, randomBytes, sendMultipart, sha256, type HttpTestApp } from '../../helpers/upload.ts';

const CHUNK = 64 * 1024;
const canMount = canMountSmallDisks('disk-full.test.ts (the really full disk)');

/**
 * Local disk that runs out of room on demand: while `roomLeft` is set, a write fails with the
 * kernel's ENOSPC once that many more bytes went through (issue 8: a full disk during a chunk).
 */
class FillingDisk extends LocalStorage implements Storage {
  roomLeft: number | null = null;
  /** What the disk fails with once the room is used: full, or a failing disk (EIO). */
  failure: 'ENOSPC' | 'EIO' = 'ENOSPC';

  override writeAt(key: string, offset: number, source: Readable): Promise<number> {
    if (this.roomLeft === null) return super.writeAt(key, offset, source);
    let room = this.roomLeft;
    const failure = this.failure;
    async function* filling(): AsyncGenerator<Buffer> {
      for await (const piece of source) {
        const buf = piece as Buffer;
        if (buf.length > room) {
          yield buf.subarray(0, room);
          if (failure === 'EIO') throw Object.assign(new Error('EIO: i/o error, write'), { code: 'EIO', errno: -5, syscall: 'write' });
          throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC', errno: -28, syscall: 'write' });
        }
        room -= buf.length;
        yield buf;
      }
    }
    return super.writeAt(key, offset, Readable.from(filling()));
  }
}

describe.each(DIALECTS)('a full disk during a chunk on %s (issue 8 fault injection)', (dialect) => {
  let t: HttpTestApp;
  let user: TestUser;
  let root: string;
  let mounted: string | null = null;
  afterEach(async () => {
    await t?.close();
    if (mounted) unmountSmallDisk(mounted);
    else fs.rmSync(root, { recursive: true, force: true });
    mounted = null;
  });

  /** A three-chunk upload into `storage` with chunk 0 stored: chunk 1 is sent next, into a full disk. */
  async function uploadWithChunk0(storage: Storage) {
    t = await createHttpTestApp(dialect, { chunkSize: CHUNK, storage });
    user = await t.createUser();
    const data = randomBytes(CHUNK * 2 + 1000);
    const uploadId = crypto.randomUUID();
    const common = { uploadId, originalname: 'full.bin', totalChunks: 3, fileSize: data.length };
    const part = (i: number) => data.subarray(i * CHUNK, (i + 1) * CHUNK);
    const send = (fields: Record<string, string | number>, body: Buffer) =>
      sendMultipart(`${t.apiUrl}/api/v1/files/upload`, { fields: { token: user.token, ...common, ...fields }, file: { data: body } });
    expect((await send({ chunkIndex: 0 }, part(0))).status).toBe(200);
    return {
      sendChunk1: async (answer: { status: number; error: RegExp; retry?: boolean } = { status: 507, error: /^Insufficient storage/ }) => {
        const full = await send({ chunkIndex: 1, chunkHash: sha256(part(1)) }, part(1));
        expect(full.status).toBe(answer.status);
        expect(String(full.body.error)).toMatch(answer.error);
        expect(full.body.retry).toBe(answer.retry);
        // Nothing is listed while bytes are missing.
        expect(await t.deps.db.selectFrom('files').select('id').execute()).toHaveLength(0);
        return postJson(`${t.apiUrl}/api/v1/files/upload/status`, { token: user.token, uploadId });
      },
      /** Once there is room: only the rest of chunk 1, then chunk 2; the file served is the file sent. */
      finish: async (kept: number) => {
        const rest = await send({ chunkIndex: 1, chunkOffset: kept, chunkHash: sha256(part(1)) }, part(1).subarray(kept));
        expect(rest.status).toBe(200);
        const done = await send({ chunkIndex: 2 }, part(2));
        expect(done.status).toBe(200);
        const res = await fetch(`${t.filesUrl}/${(done.body.file as { actual_name: string }).actual_name}`);
        expect(sha256(Buffer.from(await res.arrayBuffer()))).toBe(sha256(data));
      },
    };
  }

  it('answers 507 Insufficient storage, keeps what was stored, and completes once space is freed', async () => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'stash-full-'));
    const disk = new FillingDisk(root);
    const upload = await uploadWithChunk0(disk);
    disk.roomLeft = 20_000;
    const status = await upload.sendChunk1();
    // The bytes that fit are kept.
    expect(status.body).toMatchObject({ received: [0], partial: { chunkIndex: 1, bytes: 20_000 } });
    disk.roomLeft = null;
    await upload.finish(20_000);
  });

  it('answers 503 retry when the disk fails midway (EIO), keeps what was stored, and completes once it works again', async () => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'stash-full-'));
    const disk = new FillingDisk(root);
    const upload = await uploadWithChunk0(disk);
    disk.failure = 'EIO';
    disk.roomLeft = 20_000;
    // The server's failure, worth trying again, not a 400 "interrupted" the client takes as final.
    const status = await upload.sendChunk1({ status: 503, error: /^The file store failed while writing this upload/, retry: true });
    expect(status.body).toMatchObject({ received: [0], partial: { chunkIndex: 1, bytes: 20_000 } });
    disk.roomLeft = null;
    await upload.finish(20_000);
  });

  it.skipIf(!canMount)('does the same on a disk that is really full: the kernel’s ENOSPC, direct writes and all', async () => {
    root = mountSmallDisk(2 * 1024 * 1024)!;
    mounted = root;
    const upload = await uploadWithChunk0(new LocalStorage(root, { directWrites: true }));
    // Room for about 20 KiB of the next chunk.
    const filler = path.join(root, 'filler');
    fs.writeFileSync(filler, Buffer.alloc(freeBytes(root) - 20 * 1024));
    const status = await upload.sendChunk1();
    expect(status.body).toMatchObject({ received: [0], partial: { chunkIndex: 1 } });
    // What fit (the progress file takes a page of it) is kept and reported, so only the rest is sent again.
    const kept = (status.body.partial as { bytes: number }).bytes;
    expect(kept).toBeGreaterThanOrEqual(12 * 1024);
    expect(kept).toBeLessThanOrEqual(20 * 1024);
    fs.rmSync(filler);
    await upload.finish(kept);
  });

  it('answers a whole-file upload that meets a full disk with 507 and keeps nothing of it', async () => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'stash-full-'));
    const disk = new FillingDisk(root);
    t = await createHttpTestApp(dialect, { chunkSize: CHUNK, storage: disk });
    user = await t.createUser();
    disk.roomLeft = 5_000;
    const res = await sendMultipart(`${t.apiUrl}/api/v1/files/upload`, { fields: { token: user.token, originalname: 'w.bin' }, file: { data: randomBytes(50_000) } });
    expect(res.status).toBe(507);
    expect(String(res.body.error)).toMatch(/^Insufficient storage/);
    expect(fs.readdirSync(path.join(root, 'partial'))).toEqual([]);
  });
});
