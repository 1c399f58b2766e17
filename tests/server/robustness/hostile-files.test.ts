import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHUNK_SIZE } from '../../../contract/files.ts';
import { freePort } from '../../helpers/free-port.ts';
import { serverEnv, spawnServer, waitForHealth, type ServerProcess } from '../../helpers/server-process.ts';
import { sendMultipart } from '../../helpers/upload.ts';
import { DIALECTS } from '../../helpers/test-app.ts';
import { hostileFiles, mp4WithSampleCount, type HostileFile } from '../files/fixtures/hostile.ts';

/**
 * Issue 8, "Hostile files": crafted MP4/MOV/WebM/PNG/JPEG/GIF headers (huge counts, huge
 * dimensions, loops, truncation) uploaded whole and by chunks to a real server process. While
 * they are read, every origin keeps answering /healthz within 250 ms (HOSTILE_HEALTH_BUDGET_MS), the process never dies,
 * and each upload gets an answer (2xx or 4xx), never a 5xx or a dropped connection.
 */
// The 250 ms holds when the suite runs alone (`.ci/run` runs it so, with this variable
// set); inside the parallel `npm test` other test files share the two cores, so the bound there
// is a stall detector (today's bug stalled every listener ~5 s or killed the process).
const HEALTH_BUDGET_MS = Number(process.env.HOSTILE_HEALTH_BUDGET_MS ?? 1000);

interface Running {
  server: ServerProcess;
  api: string;
  origins: string[];
  token: string;
  cleanup(): Promise<void>;
}

async function startServer(dialect: (typeof DIALECTS)[number]): Promise<Running> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'stash-hostile-'));
  const ports = { site: await freePort(), api: await freePort(), files: await freePort() };
  let databaseUrl = `sqlite://${path.join(dataDir, 'stash.db')}`;
  let dropDatabase = async () => {};
  if (dialect === 'postgres') {
    // A database of its own: the server process takes a URL, not a schema.
    const base = process.env.TEST_DATABASE_URL as string;
    const name = `stash_hostile_${crypto.randomBytes(5).toString('hex')}`;
    const admin = new pg.Client({ connectionString: base });
    await admin.connect();
    await admin.query(`create database ${name}`);
    await admin.end();
    const url = new URL(base);
    url.pathname = `/${name}`;
    databaseUrl = url.href;
    dropDatabase = async () => {
      const c = new pg.Client({ connectionString: base });
      await c.connect();
      await c.query(`drop database if exists ${name} with (force)`);
      await c.end();
    };
  }
  const server = spawnServer(
    serverEnv(dataDir, ports, {
      DATABASE_URL: databaseUrl,
      RATE_LIMITS: 'off',
      // The URL-upload case fetches the crafted files from a server on loopback.
      URL_UPLOAD_ALLOW_PRIVATE: 'true',
    }),
  );
  const origins = Object.values(ports).map((p) => `http://127.0.0.1:${p}`);
  const api = `http://127.0.0.1:${ports.api}`;
  await waitForHealth(server, origins, 60_000);
  const login = await fetch(`${api}/api/v1/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ username: 'boss', password: 'boss-password' }),
  });
  const { token } = (await login.json()) as { token: string };
  return {
    server,
    api,
    origins,
    token,
    async cleanup() {
      await server.stop(5_000);
      await dropDatabase();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** Still running: no exit code and no signal (a V8 abort ends the process by SIGABRT, code null). */
const exitOf = (server: ServerProcess) => ({ code: server.child.exitCode, signal: server.child.signalCode });

/**
 * Polls every origin's /healthz back to back until stopped; records the slowest answer (and
 * what was being uploaded then, from `during()`) and any failure.
 */
function watchHealth(origins: string[], during: () => string = () => '') {
  let stopped = false;
  const slowest = { ms: 0, origin: '', during: '' };
  const failures: string[] = [];
  const loops = origins.map(async (origin) => {
    while (!stopped) {
      const started = performance.now();
      try {
        const res = await fetch(`${origin}/healthz`, { signal: AbortSignal.timeout(10_000) });
        await res.arrayBuffer();
        if (!res.ok) failures.push(`${origin} answered ${res.status}`);
      } catch (err) {
        failures.push(`${origin}: ${(err as Error).message}`);
      }
      const ms = performance.now() - started;
      if (ms > slowest.ms) Object.assign(slowest, { ms, origin, during: during() });
      await new Promise((r) => setTimeout(r, 20));
    }
  });
  return {
    async stop() {
      stopped = true;
      await Promise.all(loops);
      return { slowest, failures };
    },
  };
}

describe.each(DIALECTS)('hostile files against a real server process on %s (issue 8)', (dialect) => {
  let running: Running;
  beforeAll(async () => {
    running = await startServer(dialect);
  }, 90_000);
  afterAll(async () => {
    await running?.cleanup();
  });

  it(`keeps answering /healthz within ${HEALTH_BUDGET_MS} ms and never dies while crafted files are uploaded whole, by chunks and by URL`, async () => {
    const { api, token, server } = running;
    const files = hostileFiles();
    // The same bytes offered for a URL upload (design §7), from a server on loopback.
    const source = http.createServer((req, res) => {
      const file = files.find((f) => req.url === `/${f.name}`);
      res.writeHead(file ? 200 : 404, { 'content-type': 'application/octet-stream' }).end(file?.bytes);
    });
    await new Promise<void>((resolve) => source.listen(0, '127.0.0.1', resolve));
    const sourceUrl = `http://127.0.0.1:${(source.address() as AddressInfo).port}`;
    // One warm-up upload first, so the readers' start-up is not what is measured.
    const warm = await sendMultipart(`${api}/api/v1/files/upload`, { fields: { token }, file: { data: Buffer.from('warm-up text'), filename: 'warm.txt' } });
    expect(warm.status).toBe(200);

    let current = '';
    const watcher = watchHealth(running.origins, () => current);
    const answers: string[] = [];
    // A dropped connection is recorded, not thrown, so the assertions below show the server's output.
    const upload = (fields: Record<string, string | number>, file: HostileFile) =>
      sendMultipart(`${api}/api/v1/files/upload`, { fields, file: { data: file.bytes, filename: file.name } }).then(
        (answer) => String(answer.status),
        (err: Error) => err.message,
      );
    for (const file of files) {
      current = file.name;
      answers.push(`${file.name} whole: ${await upload({ token }, file)}`);
      const chunk = { token, originalname: file.name, totalChunks: 1, chunkIndex: 0, uploadId: crypto.randomUUID(), fileSize: file.bytes.length };
      answers.push(`${file.name} chunked: ${await upload(chunk, file)}`);
      const byUrl = await fetch(`${api}/api/v1/files/upload-url`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ token, url: `${sourceUrl}/${file.name}` }),
      }).then(
        (res) => String(res.status),
        (err: Error) => err.message,
      );
      answers.push(`${file.name} by URL: ${byUrl}`);
    }
    const { slowest, failures } = await watcher.stop();
    source.close();

    expect(exitOf(server), server.output()).toEqual({ code: null, signal: null });
    expect(failures, server.output()).toEqual([]);
    expect(answers.filter((a) => !/: [24]\d\d$/.test(a))).toEqual([]);
    expect(slowest.ms, `slowest /healthz: ${slowest.origin} during ${slowest.during}`).toBeLessThan(HEALTH_BUDGET_MS);
    // 36 uploads, a few of which cost a reader process its life (and its replacement a start).
  }, 240_000);

  it('reads the moov of a crafted MP4 spread over two real 80 MiB chunks without harm, and lists it', async () => {
    const { api, token, server } = running;
    // The moov sits past the first chunk, so its ranges are read back from storage.
    const bytes = mp4WithSampleCount(0xffffffff, { mdatBytes: CHUNK_SIZE + 1024 * 1024, moovAtEnd: true });
    const uploadId = crypto.randomUUID();
    const watcher = watchHealth(running.origins);
    const statuses: number[] = [];
    let last: Record<string, unknown> = {};
    for (let index = 0; index < 2; index++) {
      const answer = await sendMultipart(`${api}/api/v1/files/upload`, {
        fields: { token, originalname: 'crafted.mp4', totalChunks: 2, chunkIndex: index, uploadId, fileSize: bytes.length },
        file: { data: bytes.subarray(index * CHUNK_SIZE, (index + 1) * CHUNK_SIZE), filename: 'crafted.mp4' },
      });
      statuses.push(answer.status);
      last = answer.body;
    }
    const { slowest, failures } = await watcher.stop();
    expect(exitOf(server), server.output()).toEqual({ code: null, signal: null });
    expect(failures).toEqual([]);
    expect(statuses).toEqual([200, 200]);
    // Listed, with the size its moov gives: the claimed sample count costs nothing any more.
    expect(last.file).toMatchObject({ mime_type: 'video/mp4', width: 320, height: 240 });
    expect(slowest.ms, `slowest /healthz: ${slowest.origin} during ${slowest.during}`).toBeLessThan(HEALTH_BUDGET_MS);
  });
});
