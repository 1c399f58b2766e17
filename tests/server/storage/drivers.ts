import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { LocalStorage } from '../../../server/storage/local.ts';
import { S3Storage } from '../../../server/storage/s3.ts';
import type { Storage } from '../../../server/storage/storage.ts';
import { createTestBucket, s3Endpoint, s3Settings } from '../../helpers/s3-server.ts';

/** `local-direct`: local disk with STORAGE_DIRECT_WRITES on (uploads past the page cache). */
export type DriverName = 'local' | 'local-direct' | 's3';

export interface DriverHandle {
  storage: Storage;
  close(): Promise<void>;
}

/** A fresh, empty store of each kind (style habit 9). */
export async function openDriver(name: DriverName, options: { chunkSize: number; pieceSize?: number }): Promise<DriverHandle & { bucket?: string; s3?: S3Storage }> {
  if (name === 'local' || name === 'local-direct') {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'stash-storage-'));
    return { storage: new LocalStorage(dir, { directWrites: name === 'local-direct' }), close: async () => fs.rmSync(dir, { recursive: true, force: true }) };
  }
  const endpoint = await s3Endpoint();
  const b = await createTestBucket(endpoint);
  const storage = new S3Storage(s3Settings(endpoint, b.bucket), { chunkSize: options.chunkSize, pieceSize: options.pieceSize, log: () => {} });
  return {
    storage,
    s3: storage,
    bucket: b.bucket,
    close: async () => {
      storage.client.destroy();
      await b.drop();
    },
  };
}

/**
 * Deterministic bytes, different for every offset, so a misplaced byte shows: an AES-CTR key
 * stream keyed by `seed` (a byte-by-byte generator in JavaScript had cost the storage suites
 * seconds of CPU for their tens of MiB).
 */
export function pattern(size: number, seed = 1): Buffer {
  const key = Buffer.alloc(16);
  key.writeUInt32BE(seed >>> 0);
  return crypto.createCipheriv('aes-128-ctr', key, Buffer.alloc(16)).update(Buffer.alloc(size));
}

/** A source that delivers `data` in 64 KiB pieces, then fails (a client cut off midway). */
export function failingSource(data: Buffer): Readable {
  return Readable.from(
    (async function* () {
      for (let i = 0; i < data.length; i += 65_536) yield data.subarray(i, i + 65_536);
      throw new Error('client went away');
    })(),
    { objectMode: false },
  );
}

export function source(data: Buffer): Readable {
  return Readable.from(
    (function* () {
      for (let i = 0; i < data.length; i += 65_536) yield data.subarray(i, i + 65_536);
    })(),
    { objectMode: false },
  );
}

export async function readAll(stream: Readable): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const p of stream) parts.push(p as Buffer);
  return Buffer.concat(parts);
}
