import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { createTestDatabase } from '../../helpers/pg-database.ts';
import { freePort } from '../../helpers/free-port.ts';
import { serverEnv, spawnServer, waitForHealth, waitForOutput, type ServerProcess } from '../../helpers/server-process.ts';
import { postJson, sendMultipart, sha256 } from '../../helpers/upload.ts';

/**
 * PostgreSQL restarting, failing over or ending connections (pg_terminate_backend,
 * idle_session_timeout) must not take the server down: the process is the server as an
 * operator runs it (compiled, tests/helpers/server-process.ts), on a database of its own that the test ends connections to, then drops.
 */
const RUN = Boolean(process.env.TEST_DATABASE_URL);
if (!RUN) console.warn('\n!!! postgres-outage tests SKIPPED: they need TEST_DATABASE_URL (.ci/run sets it).\n');

const LOST_LINE = 'PostgreSQL closed a connection';
const cleanups: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const c of cleanups.reverse()) await c().catch(() => {});
});

/** Chunks of 64 KiB (NODE_ENV=test only), so a 3-chunk upload is a few hundred kilobytes. */
const CHUNK = 64 * 1024;

async function startOn(databaseUrl: string): Promise<{ server: ServerProcess; api: string; files: string; token: string }> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'stash-pg-outage-'));
  const ports = { site: await freePort(), api: await freePort(), files: await freePort() };
  const server = spawnServer(
    serverEnv(dataDir, ports, { DATABASE_URL: databaseUrl, STASH_ROLES: 'api,files', NODE_ENV: 'test', STASH_TEST_CHUNK_SIZE: String(CHUNK), FILES_URL: `http://127.0.0.1:${ports.files}` }),
  );
  cleanups.push(async () => {
    await server.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });
  const api = `http://127.0.0.1:${ports.api}`;
  const files = `http://127.0.0.1:${ports.files}`;
  // Within the test's 60 s, so a start that never finishes fails with the server's output.
  await waitForHealth(server, [api, files], 40_000);
  const login = await postJson(`${api}/api/v1/auth/login`, { username: 'boss', password: 'boss-password' });
  expect(login.status, JSON.stringify(login.body)).toBe(200);
  return { server, api, files, token: String(login.body.token) };
}

/** Ends every connection to `database` but the asker's; how many it ended. */
async function endConnections(database: string): Promise<number> {
  const admin = new pg.Client({ connectionString: process.env.TEST_DATABASE_URL });
  await admin.connect();
  try {
    const res = await admin.query<{ n: number }>('select count(pg_terminate_backend(pid))::int as n from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()', [database]);
    return res.rows[0]!.n;
  } finally {
    await admin.end();
  }
}

const listOwn = (api: string, token: string) => postJson(`${api}/api/v1/files/uploaded`, { token, page: 1 });

describe.skipIf(!RUN)('PostgreSQL outage', () => {
  it('keeps serving when PostgreSQL ends its connections, and says so once, not once per connection', async () => {
    const db = await createTestDatabase('stash_outage');
    cleanups.push(db.drop);
    const { server, api, token } = await startOn(db.url);
    // Two at once, so the pool holds more than one connection when they are all ended together.
    const before = await Promise.all([listOwn(api, token), listOwn(api, token)]);
    expect(before.map((r) => r.status)).toEqual([200, 200]);

    expect(await endConnections(new URL(db.url).pathname.slice(1))).toBeGreaterThanOrEqual(2);
    await waitForOutput(server, LOST_LINE);

    const after = await listOwn(api, token);
    expect(after.status, JSON.stringify(after.body)).toBe(200);
    expect(after.body).toEqual(before[0]!.body);
    expect(server.child.exitCode).toBeNull();
    expect(server.output().split(LOST_LINE).length - 1).toBe(1);
  });

  it('an upload whose database restarts between its chunks completes and downloads byte-identical', async () => {
    const db = await createTestDatabase('stash_outage');
    cleanups.push(db.drop);
    const { server, api, files, token } = await startOn(db.url);
    const data = crypto.randomBytes(2 * CHUNK + 12_345);
    const uploadId = crypto.randomUUID();
    const chunkOf = (i: number) => data.subarray(i * CHUNK, (i + 1) * CHUNK);
    const send = (i: number) =>
      sendMultipart(`${api}/api/v1/files/upload`, {
        fields: { token, uploadId, originalname: 'outage.bin', totalChunks: 3, chunkIndex: i, fileSize: data.length, chunkHash: sha256(chunkOf(i)) },
        file: { data: chunkOf(i) },
      });

    expect((await send(0)).status).toBe(200);
    expect(await endConnections(new URL(db.url).pathname.slice(1))).toBeGreaterThanOrEqual(1);
    await waitForOutput(server, LOST_LINE);
    const second = await send(1);
    expect(second.status, JSON.stringify(second.body)).toBe(200);
    expect(second.body.received).toEqual([0, 1]);
    const last = await send(2);
    expect(last.status, JSON.stringify(last.body)).toBe(200);

    const res = await fetch(`${files}/${(last.body.file as { actual_name: string }).actual_name}`);
    expect(res.status).toBe(200);
    expect(sha256(Buffer.from(await res.arrayBuffer()))).toBe(sha256(data));
  });

  it('answers 503 with a message a person can act on while its database is gone, and stays up', async () => {
    const db = await createTestDatabase('stash_outage');
    const { server, api, token } = await startOn(db.url);
    expect((await listOwn(api, token)).status).toBe(200);

    await db.drop();
    await waitForOutput(server, LOST_LINE);

    const res = await fetch(`${api}/api/v1/files/uploaded`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ token, page: 1 }) });
    expect(res.status).toBe(503);
    expect(res.headers.get('retry-after')).toBe('5');
    expect(await res.json()).toEqual({ success: false, error: 'The database is unavailable right now. Please try again in a moment.' });
    expect((await fetch(`${api}/healthz`)).status).toBe(503);
    expect(server.child.exitCode).toBeNull();
  });
});
