import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startTus } from './anchors.ts';
import { canMeasureCpu, processCpu, processTreeCpu } from './cpu-time.ts';
import { options } from './options.ts';
import { benchPostgresUrl, withScratchDatabase } from './scratch-postgres.ts';
import { login, startServer } from './server-process.ts';
import { interleave, median, ms, percentile, type Row } from './stats.ts';

const BYTES = 1024;
const PER_ROUND = options.quick ? 40 : 300;
const ROUNDS = options.quick ? 2 : 3;
const WARM_UP = options.quick ? 10 : 50;
const AT_ONCE = 8;

/** A 1 KiB file no other upload repeats (ShareX sends screenshots, each its own bytes). */
const fileBytes = () => crypto.randomBytes(BYTES);

interface Contender {
  /** CPU seconds the contender's processes have used so far. */
  cpu(): number;
  upload(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * How a small file is sent: `sharex` as the ShareX config Stash hands out sends it (the API key
 * in an Authorization header, the file alone: a whole file in one request, design §7), `chunk` as
 * a spec client sends one chunk (the token and spec §7's chunk fields, no resume fields).
 */
type Shape = 'sharex' | 'chunk';

const SHAPES: Record<Shape, string> = { sharex: "ShareX's request", chunk: 'one chunk with spec §7 fields' };

/** A Stash server taking small uploads of `shape`. */
async function stash(env: Record<string, string>, shape: Shape): Promise<Contender> {
  const server = await startServer(env);
  const token = await login(server.apiUrl);
  const key = shape === 'sharex' ? await apiKey(server.apiUrl, token) : '';
  return {
    // The server and its type readers, which read every upload's first bytes (issue 8).
    cpu: () => processTreeCpu(server.pid),
    async upload() {
      const form = new FormData();
      // Named apart, as a screenshot tool names each by its time: a client without an uploadId is
      // told apart by its file name (design §7), and two of one name at once would be one upload.
      const name = `screenshot-${crypto.randomUUID()}.png`;
      const headers: Record<string, string> = {};
      if (shape === 'sharex') {
        headers.authorization = `Bearer ${key}`;
        form.set('file', new Blob([fileBytes()]), name);
      } else {
        form.set('token', token);
        form.set('originalname', name);
        form.set('totalChunks', '1');
        form.set('chunkIndex', '0');
        form.set('file', new Blob([fileBytes()]), 'screenshot.png');
      }
      const res = await fetch(`${server.apiUrl}/api/v1/files/upload`, { method: 'POST', body: form, headers });
      const body = (await res.json()) as { success?: boolean };
      if (!res.ok || !body.success) throw new Error(`upload refused: ${res.status} ${JSON.stringify(body)}`);
    },
    stop: () => server.stop(),
  };
}

async function apiKey(apiUrl: string, token: string): Promise<string> {
  const res = await fetch(`${apiUrl}/api/v1/auth/apikeys/generate`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ token }) });
  const body = (await res.json()) as { apiKey?: { key?: string } };
  if (!body.apiKey?.key) throw new Error(`no API key: ${res.status} ${JSON.stringify(body)}`);
  return body.apiKey.key;
}

/** The tus server's one-request upload (creation-with-upload): created and written in one POST. */
async function tus(dir: string): Promise<Contender> {
  const server = await startTus(dir);
  return {
    cpu: () => processCpu(server.pid),
    async upload() {
      const body = fileBytes();
      const res = await fetch(`${server.url}/files`, {
        method: 'POST',
        headers: { 'tus-resumable': '1.0.0', 'upload-length': String(body.length), 'content-type': 'application/offset+octet-stream' },
        body,
      });
      await res.arrayBuffer();
      if (res.status !== 201 || res.headers.get('upload-offset') !== String(body.length)) throw new Error(`tus refused: ${res.status}`);
    },
    stop: () => server.stop(),
  };
}

interface Round {
  perSecond: number;
  latencies: number[];
  cpuMs: number;
}

/** PER_ROUND uploads, `atOnce` in flight at a time: the rate, each upload's time, and the server's CPU per upload. */
async function round(c: Contender, atOnce: number, rounds: Map<Contender, Round[]>): Promise<number> {
  const latencies: number[] = [];
  const cpu0 = c.cpu();
  const t0 = performance.now();
  let started = 0;
  await Promise.all(
    Array.from({ length: atOnce }, async () => {
      while (started < PER_ROUND) {
        started++;
        const t = performance.now();
        await c.upload();
        latencies.push(performance.now() - t);
      }
    }),
  );
  const seconds = (performance.now() - t0) / 1000;
  const got = { perSecond: PER_ROUND / seconds, latencies, cpuMs: ((c.cpu() - cpu0) * 1000) / PER_ROUND };
  rounds.set(c, [...(rounds.get(c) ?? []), got]);
  return got.perSecond;
}

function describe(rounds: Round[]): string {
  const all = rounds.flatMap((r) => r.latencies);
  const cpu = canMeasureCpu ? `, CPU ${median(rounds.map((r) => r.cpuMs)).toFixed(1)} ms an upload` : '';
  return `${median(rounds.map((r) => r.perSecond)).toFixed(0)} a second (p50 ${ms(percentile(all, 50))}, p95 ${ms(percentile(all, 95))}${cpu})`;
}

/**
 * Not a row of issue 9's targets: what one small upload costs (ShareX's case, a screenshot per
 * request, in each Shape), one after another and AT_ONCE at a time, against the tus server doing
 * the same in one request. Stash on SQLite, and on PostgreSQL where one is configured, interleaved
 * with tus.
 */
export async function smallUploads(): Promise<Row[]> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'stash-bench-small-'));
  const run = async (databaseEnv: Record<string, string>, label: string): Promise<Row[]> => {
    const contenders = { sharex: await stash(databaseEnv, 'sharex'), chunk: await stash(databaseEnv, 'chunk'), tus: await tus(dir) };
    try {
      for (const c of Object.values(contenders)) for (let i = 0; i < WARM_UP; i++) await c.upload();
      const rows: Row[] = [];
      for (const atOnce of [1, AT_ONCE]) {
        const rounds = new Map<Contender, Round[]>();
        const rates = await interleave(
          {
            sharex: () => round(contenders.sharex, atOnce, rounds),
            chunk: () => round(contenders.chunk, atOnce, rounds),
            tus: () => round(contenders.tus, atOnce, rounds),
          },
          ROUNDS,
        );
        for (const shape of ['sharex', 'chunk'] as const) {
          rows.push({
            benchmark: `${BYTES / 1024} KiB uploads, ${SHAPES[shape]}, ${atOnce === 1 ? 'one after another' : `${atOnce} at once`} (${label}; not a target)`,
            stash: describe(rounds.get(contenders[shape])!),
            baselineName: 'the tus server',
            baseline: describe(rounds.get(contenders.tus)!),
            ratio: `${(median(rates[shape]!) / median(rates.tus!)).toFixed(2)} × its rate`,
          });
        }
      }
      return rows;
    } finally {
      for (const c of Object.values(contenders)) await c.stop();
    }
  };
  try {
    const rows = await run({}, 'SQLite');
    const pgUrl = benchPostgresUrl();
    if (pgUrl) rows.push(...(await withScratchDatabase(pgUrl, 'small', (url) => run({ DATABASE_URL: url }, 'PostgreSQL'))));
    return rows;
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
