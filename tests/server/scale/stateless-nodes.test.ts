import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { CHUNK_SIZE } from '../../../contract/files.ts';
import { createTestDatabase } from '../../helpers/pg-database.ts';
import { freePort } from '../../helpers/free-port.ts';
import { S3_AVAILABLE, createTestBucket, s3Endpoint, s3Env, stopS3Server, warnS3Skipped } from '../../helpers/s3-server.ts';
import { spawnServer, waitForHealth, type ServerProcess } from '../../helpers/server-process.ts';
import { postJson, sendMultipart, sha256 } from '../../helpers/upload.ts';

/**
 * Issue 10 "Stateless nodes": two API processes and one files process share one PostgreSQL
 * database, one S3 bucket and one Redis, and nothing else. The chunks of one upload go to
 * alternate API processes, one chunk is cut midway on one and resumed on the other, and the
 * files process serves the byte-identical file. Real 80 MB chunks: the processes are
 * the server as an operator runs it (compiled, tests/helpers/server-process.ts).
 */
const DATABASE_URL = process.env.TEST_DATABASE_URL;
const RUN = Boolean(DATABASE_URL) && S3_AVAILABLE;
if (!RUN) console.warn('\n!!! stateless-nodes test SKIPPED: it needs TEST_DATABASE_URL and an S3 test server (.ci/run sets both).\n');
warnS3Skipped();
afterAll(stopS3Server);

const cleanups: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const c of cleanups.reverse()) await c().catch(() => {});
});

async function freshDatabase(): Promise<string> {
  const db = await createTestDatabase('stash_nodes');
  cleanups.push(db.drop);
  return db.url;
}

describe.skipIf(!RUN)('stateless nodes (issue 10)', () => {
  it('one upload across two api processes, cut on one and resumed on the other, downloads byte-identical from the files process', async () => {
    const databaseUrl = await freshDatabase();
    const endpoint = await s3Endpoint();
    const bucket = await createTestBucket(endpoint);
    cleanups.push(bucket.drop);
    const ports = { api1: await freePort(), api2: await freePort(), files: await freePort() };
    const shared = {
      ...process.env,
      ...s3Env(endpoint, bucket.bucket),
      DATABASE_URL: databaseUrl,
      ...(process.env.TEST_REDIS_URL ? { REDIS_URL: process.env.TEST_REDIS_URL } : {}),
      HOST: '127.0.0.1',
      ADMIN_USERNAME: 'boss',
      ADMIN_PASSWORD: 'boss-password',
      FILES_URL: `http://127.0.0.1:${ports.files}`,
      LOG_LEVEL: 'warn',
    };
    const start = (role: 'api' | 'files', port: number): ServerProcess => {
      // Each process gets its own DATA_DIR: nothing on a node's disk may matter.
      const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'stash-node-'));
      const server = spawnServer({ ...shared, STASH_ROLES: role, DATA_DIR: dataDir, [role === 'api' ? 'API_PORT' : 'FILES_PORT']: String(port) });
      cleanups.push(async () => {
        await server.stop();
        fs.rmSync(dataDir, { recursive: true, force: true });
      });
      return server;
    };
    // The first process creates the schema; the others start on it.
    const api1 = start('api', ports.api1);
    await waitForHealth(api1, [`http://127.0.0.1:${ports.api1}`]);
    const api2 = start('api', ports.api2);
    const files = start('files', ports.files);
    await waitForHealth(api2, [`http://127.0.0.1:${ports.api2}`]);
    await waitForHealth(files, [`http://127.0.0.1:${ports.files}`]);
    const apis = [`http://127.0.0.1:${ports.api1}`, `http://127.0.0.1:${ports.api2}`];

    const login = await postJson(`${apis[0]}/api/v1/auth/login`, { username: 'boss', password: 'boss-password' });
    expect(login.status, JSON.stringify(login.body)).toBe(200);
    const token = String(login.body.token);

    const data = crypto.randomBytes(2 * CHUNK_SIZE + 1_234_567);
    const uploadId = crypto.randomUUID();
    const chunkOf = (i: number) => data.subarray(i * CHUNK_SIZE, (i + 1) * CHUNK_SIZE);
    const send = (api: string, i: number, from = 0, abortAfter?: number, beforeCut?: () => Promise<unknown>) =>
      sendMultipart(`${api}/api/v1/files/upload`, {
        fields: {
          token,
          uploadId,
          originalname: 'nodes.bin',
          totalChunks: 3,
          chunkIndex: i,
          fileSize: data.length,
          chunkHash: sha256(chunkOf(i)),
          ...(from > 0 ? { chunkOffset: from } : {}),
        },
        file: { data: chunkOf(i).subarray(from) },
        abortAfter,
        beforeCut,
      });

    expect((await send(apis[0] ?? '', 0)).status).toBe(200);

    // What the first process, which never sees chunk 1 being sent, reports the store holds.
    const readPartial = async (atLeast: number): Promise<{ chunkIndex: number; bytes: number } | null> => {
      const deadline = Date.now() + 60_000;
      for (;;) {
        const st = await postJson(`${apis[0]}/api/v1/files/upload/status`, { token, uploadId });
        const found = (st.body.partial as { chunkIndex: number; bytes: number } | null) ?? null;
        if ((found && found.bytes >= atLeast) || Date.now() > deadline) return found;
        await new Promise((r) => setTimeout(r, 100));
      }
    };
    // Chunk 1 is cut off 30 MiB in on the second process, once the store holds its first three
    // 8 MiB pieces: on a loaded machine a fixed pause before the cut left ~6 MiB unread in the
    // socket buffers, and the cut then lost a piece the assertion below counts on.
    await send(apis[1] ?? '', 1, 0, 30 * 1024 * 1024, () => readPartial(24 * 1024 * 1024)).catch(() => null);
    const partial = await readPartial(1);
    expect(partial?.chunkIndex).toBe(1);
    const kept = partial?.bytes ?? 0;
    expect(kept).toBeGreaterThan(20 * 1024 * 1024);
    expect(kept).toBeLessThanOrEqual(30 * 1024 * 1024);

    // The first process resumes it with only the rest; its chunkHash covers the whole chunk.
    const resumed = await send(apis[0] ?? '', 1, kept);
    expect(resumed.status, JSON.stringify(resumed.body)).toBe(200);
    expect(resumed.body.received).toEqual([0, 1]);

    const done = await send(apis[1] ?? '', 2);
    expect(done.status, JSON.stringify(done.body)).toBe(200);
    const name = (done.body.file as { actual_name: string }).actual_name;

    const res = await fetch(`http://127.0.0.1:${ports.files}/${name}`);
    expect(res.status).toBe(200);
    const got = Buffer.from(await res.arrayBuffer());
    expect(got.length).toBe(data.length);
    expect(sha256(got)).toBe(sha256(data));
  }, 300_000);
});
