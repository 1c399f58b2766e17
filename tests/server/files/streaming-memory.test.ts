import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import { afterAll, describe, expect, it } from 'vitest';
import { CHUNK_SIZE } from '../../../contract/files.ts';
import { deterministicBytes, sendMultipart } from '../../helpers/upload.ts';

const MB = 1_048_576;
const TOTAL = 500 * MB;

/** Resident set (VmRSS) and its peak so far (VmHWM) of a process, in bytes, from /proc. */
function memoryOf(pid: number): { rss: number; peak: number } {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN) * 1024;
  return { rss: kb('VmRSS'), peak: kb('VmHWM') };
}

// A coarse guard, not a benchmark (design §10): the server must stream, so a 500 MB upload in
// 80 MB chunks may not grow its memory by anything near a chunk. Only Linux has /proc.
describe.runIf(process.platform === 'linux')('upload memory (issue 3)', () => {
  let child: ChildProcess | null = null;
  afterAll(async () => {
    if (child && child.exitCode === null) {
      const exited = new Promise((r) => child?.once('exit', r));
      child.kill('SIGTERM');
      await exited;
    }
  });

  it('stores a 500 MB upload while the server process grows by less than 100 MB', { timeout: 240_000 }, async () => {
    const script = path.join(import.meta.dirname, 'fixtures', 'streaming-server.ts');
    child = spawn(process.execPath, ['--import', 'tsx', script], { stdio: ['ignore', 'pipe', 'inherit'] });
    const pid = child.pid as number;
    const firstLine = await new Promise<string>((resolve, reject) => {
      const rl = readline.createInterface({ input: child?.stdout as NodeJS.ReadableStream });
      rl.once('line', resolve);
      child?.once('exit', (code) => reject(new Error(`server exited with ${String(code)}`)));
    });
    const { port, token } = JSON.parse(firstLine) as { port: number; token: string };
    const url = `http://127.0.0.1:${port}/api/v1/files/upload`;

    // Warm up every code path once (multipart, hashing, type detection) before the baseline.
    const warm = await sendMultipart(url, { bearer: token, fields: { originalname: 'warm.bin' }, file: { data: Buffer.alloc(64 * 1024, 7) } });
    expect(warm.status).toBe(200);
    const baseline = memoryOf(pid).rss;

    let sampledMax = baseline;
    const sampler = setInterval(() => {
      sampledMax = Math.max(sampledMax, memoryOf(pid).rss);
    }, 50);
    const totalChunks = Math.ceil(TOTAL / CHUNK_SIZE);
    let last: Awaited<ReturnType<typeof sendMultipart>> | null = null;
    try {
      for (let i = 0; i < totalChunks; i++) {
        const size = Math.min(CHUNK_SIZE, TOTAL - i * CHUNK_SIZE);
        last = await sendMultipart(url, {
          bearer: token,
          fields: { uploadId: '6d0f5d36-4d1e-4a53-9f57-1b8f2c3a9e10', originalname: 'big.bin', totalChunks, chunkIndex: i, fileSize: TOTAL },
          file: { data: () => deterministicBytes(size, `chunk-${i}`) },
        });
        expect(last.status, JSON.stringify(last.body)).toBe(200);
      }
    } finally {
      clearInterval(sampler);
    }
    expect((last?.body.file as { size: number }).size).toBe(TOTAL);
    const after = memoryOf(pid);
    const grewBy = Math.max(after.peak, sampledMax) - baseline;
    console.log(`server RSS baseline ${(baseline / MB).toFixed(1)} MB, peak ${(Math.max(after.peak, sampledMax) / MB).toFixed(1)} MB, growth ${(grewBy / MB).toFixed(1)} MB`);
    expect(grewBy).toBeLessThan(100 * MB);
  });
});
