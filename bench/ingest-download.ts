import { spawn, spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { CHUNK_SIZE } from '../contract/files.ts';
import { login, startServer } from './server-process.ts';
import { chunkBytes } from './upload-client.ts';
import { mbps, type Row } from './stats.ts';

const CHUNKS = 5; // 400 MiB

async function drain(url: string): Promise<number> {
  const res = await fetch(url);
  if (!res.ok || !res.body) throw new Error(`GET ${url}: ${res.status}`);
  let n = 0;
  const reader = res.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return n;
    n += value.length;
  }
}

async function timeDownloads(url: string, times: number): Promise<{ bytes: number; ms: number }> {
  await drain(url); // warm the page cache for both contenders alike
  const t0 = performance.now();
  let bytes = 0;
  for (let i = 0; i < times; i++) bytes += await drain(url);
  return { bytes, ms: performance.now() - t0 };
}

async function startNginx(root: string): Promise<{ url: string; stop(): void } | null> {
  if (spawnSync('sh', ['-c', 'command -v nginx']).status !== 0) return null;
  const port = 20000 + Math.floor(Math.random() * 20000);
  const conf = path.join(root, 'nginx.conf');
  fs.writeFileSync(
    conf,
    `worker_processes 1; daemon off; pid ${root}/nginx.pid; error_log ${root}/error.log;
events { worker_connections 64; }
http { access_log off; sendfile on; server { listen 127.0.0.1:${port}; root ${root}; } }`,
  );
  const child = spawn('nginx', ['-c', conf, '-p', root], { stdio: 'ignore' });
  for (let i = 0; i < 50; i++) {
    try {
      await fetch(`http://127.0.0.1:${port}/`);
      return { url: `http://127.0.0.1:${port}`, stop: () => child.kill('SIGTERM') };
    } catch {
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  child.kill('SIGTERM');
  return null;
}

/** Design §10: chunked ingest against a raw sequential write, download against nginx. */
export async function ingestAndDownload(): Promise<Row[]> {
  const server = await startServer();
  const token = await login(server.apiUrl);
  const size = CHUNKS * CHUNK_SIZE;
  const chunks = Array.from({ length: CHUNKS }, (_, i) => chunkBytes(7, i, CHUNK_SIZE));
  const hashes = chunks.map((c) => crypto.createHash('sha256').update(c).digest('hex'));
  const uploadId = crypto.randomUUID();
  let url = '';
  const t0 = performance.now();
  for (let i = 0; i < CHUNKS; i++) {
    const form = new FormData();
    for (const [k, v] of Object.entries({ token, uploadId, originalname: 'ingest.bin', totalChunks: String(CHUNKS), chunkIndex: String(i), fileSize: String(size), chunkHash: hashes[i] ?? '' })) form.set(k, v);
    form.set('file', new Blob([chunks[i]!]), 'ingest.bin');
    const res = await fetch(`${server.apiUrl}/api/v1/files/upload`, { method: 'POST', body: form });
    const body = (await res.json()) as { url?: string };
    if (!res.ok) throw new Error(`upload failed: ${res.status} ${JSON.stringify(body)}`);
    if (body.url) url = body.url;
  }
  const ingestMs = performance.now() - t0;

  const rawDir = fs.mkdtempSync(path.join(os.tmpdir(), 'stash-raw-'));
  // nginx's workers run as an unprivileged user: let them read the file.
  fs.chmodSync(rawDir, 0o755);
  const rawFile = path.join(rawDir, 'ingest.bin');
  const t1 = performance.now();
  const handle = await fsp.open(rawFile, 'w');
  for (const c of chunks) await handle.write(c);
  await handle.close();
  const rawMs = performance.now() - t1;
  fs.chmodSync(rawFile, 0o644);

  const name = url.split('/').pop() ?? '';
  const stash = await timeDownloads(`${server.filesUrl}/${name}`, 5);
  const nginx = await startNginx(rawDir);
  const nginxResult = nginx ? await timeDownloads(`${nginx.url}/ingest.bin`, 5) : null;
  nginx?.stop();
  await server.stop();
  fs.rmSync(rawDir, { recursive: true, force: true });
  fs.rmSync(server.dataDir, { recursive: true, force: true });
  return [
    { benchmark: `chunked upload ingest, ${CHUNKS} × 80 MiB (SHA-256 checked)`, stash: mbps(size, ingestMs), baselineName: 'raw sequential write', baseline: mbps(size, rawMs) },
    {
      benchmark: 'download of a 400 MiB file (5 GETs, warm cache)',
      stash: mbps(stash.bytes, stash.ms),
      baselineName: 'nginx, same file',
      baseline: nginxResult ? mbps(nginxResult.bytes, nginxResult.ms) : 'nginx not installed',
    },
  ];
}
