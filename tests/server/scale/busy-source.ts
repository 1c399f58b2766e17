import crypto from 'node:crypto';
import { expect } from 'vitest';
import type { TestUser } from '../../helpers/test-app.ts';
import { randomBytes, sendMultipart, sha256, type HttpTestApp } from '../../helpers/upload.ts';

/**
 * A source instance for the backup tests: twelve files listed before the backup starts, one
 * unfinished chunked upload (rows in the database, bytes only partly stored), and `put()` to
 * keep uploading while the backup runs. `hashes` maps every listed file to its SHA-256.
 */
export async function busySource(source: HttpTestApp): Promise<{ user: TestUser; hashes: Map<string, string>; before: Set<string>; put: () => Promise<void> }> {
  const user = await source.createUser();
  const hashes = new Map<string, string>();
  let n = 0;
  const put = async () => {
    n += 1;
    const data = randomBytes(1000 + n * 7919);
    const res = await sendMultipart(`${source.apiUrl}/api/v1/files/upload`, { fields: { token: user.token, originalname: `f${n}.bin` }, file: { data } });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    hashes.set((res.body.file as { actual_name: string }).actual_name, sha256(data));
  };
  for (let i = 0; i < 12; i += 1) await put();
  const before = new Set(hashes.keys());
  await sendMultipart(`${source.apiUrl}/api/v1/files/upload`, {
    fields: { token: user.token, uploadId: crypto.randomUUID(), originalname: 'half.bin', totalChunks: 3, chunkIndex: 0 },
    file: { data: crypto.randomBytes(64 * 1024) },
  });
  return { user, hashes, before, put };
}
