import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { LocalStorage } from '../../../server/storage/local.ts';
import type { Storage } from '../../../server/storage/storage.ts';
import { DIALECTS, type TestUser } from '../../helpers/test-app.ts';
import { createHttpTestApp, postJson, randomBytes, sendMultipart, sha256, type HttpTestApp } from '../../helpers/upload.ts';

const CHUNK = 64 * 1024;

/**
 * Local disk that runs out of room on demand: while `roomLeft` is set, a write fails with the
 * kernel's ENOSPC once that many more bytes went through (issue 8: a full disk during a chunk).
 */
class FillingDisk extends LocalStorage implements Storage {
  roomLeft: number | null = null;

  override writeAt(key: string, offset: number, source: Readable): Promise<number> {
    if (this.roomLeft === null) return super.writeAt(key, offset, source);
    let room = this.roomLeft;
    async function* filling(): AsyncGenerator<Buffer> {
      for await (const piece of source) {
        const buf = piece as Buffer;
        if (buf.length > room) {
          yield buf.subarray(0, room);
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
  afterEach(async () => {
    await t?.close();
    fs.rmSync(root, { recursive: true, force: true });
  });

  it('answers 507 Insufficient storage, keeps what was stored, and completes once space is freed', async () => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'stash-full-'));
    const disk = new FillingDisk(root);
    t = await createHttpTestApp(dialect, { chunkSize: CHUNK, storage: disk });
    user = await t.createUser();
    const data = randomBytes(CHUNK * 2 + 1000);
    const uploadId = crypto.randomUUID();
    const common = { uploadId, originalname: 'full.bin', totalChunks: 3, fileSize: data.length };
    const part = (i: number) => data.subarray(i * CHUNK, (i + 1) * CHUNK);
    const send = (fields: Record<string, string | number>, body: Buffer) =>
      sendMultipart(`${t.apiUrl}/api/v1/files/upload`, { fields: { token: user.token, ...common, ...fields }, file: { data: body } });

    expect((await send({ chunkIndex: 0 }, part(0))).status).toBe(200);
    disk.roomLeft = 20_000;
    const full = await send({ chunkIndex: 1, chunkHash: sha256(part(1)) }, part(1));
    expect(full.status).toBe(507);
    expect(String(full.body.error)).toMatch(/^Insufficient storage/);
    // Nothing is listed while bytes are missing, and the bytes that fit are kept.
    expect(await t.deps.db.selectFrom('files').select('id').execute()).toHaveLength(0);
    const status = await postJson(`${t.apiUrl}/api/v1/files/upload/status`, { token: user.token, uploadId });
    expect(status.body).toMatchObject({ received: [0], partial: { chunkIndex: 1, bytes: 20_000 } });

    disk.roomLeft = null;
    const rest = await send({ chunkIndex: 1, chunkOffset: 20_000, chunkHash: sha256(part(1)) }, part(1).subarray(20_000));
    expect(rest.status).toBe(200);
    const done = await send({ chunkIndex: 2 }, part(2));
    expect(done.status).toBe(200);
    const res = await fetch(`${t.filesUrl}/${(done.body.file as { actual_name: string }).actual_name}`);
    expect(sha256(Buffer.from(await res.arrayBuffer()))).toBe(sha256(data));
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
