import crypto from 'node:crypto';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CHUNK_SIZE } from '../contract/files.ts';
import { curl, startIngestFloor, startNginx, startServeFloor, startTus, type Anchor } from './anchors.ts';
import { filesHostServer, hasNginx, startNginx as startNginxIn } from '../tests/helpers/nginx.ts';
import { options } from './options.ts';
import { login, startServer, type BenchServer } from './server-process.ts';
import { startS3Bench } from './s3-store.ts';
import { chunkBytes } from './upload-client.ts';
import { canMeasureCpu, cpuOfProgram, cpuSummary, endedChildrenCpu, processCpu, withCpu } from './cpu-time.ts';
import { interleave, median, ms, rateSummary, ratio, timeSummary, MB, type Row } from './stats.ts';

const SIZE = options.quick ? 3 * CHUNK_SIZE : 1024 * MB;
const ROUNDS = options.quick ? 2 : 3;

export interface Source {
  dir: string;
  size: number;
  chunks: { file: string; bytes: number; sha256: string }[];
  /** The same bytes as one file (for dd and nginx). */
  whole: string;
}

/** The upload's bytes on disk (page cache) as spec §7 chunks, so every contender reads the same. */
export function makeSource(size: number, seed: number): Source {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'stash-src-'));
  fs.chmodSync(dir, 0o755);
  const whole = path.join(dir, 'whole.bin');
  const out = fs.openSync(whole, 'w');
  const chunks: Source['chunks'] = [];
  for (let i = 0; i * CHUNK_SIZE < size; i++) {
    const bytes = Math.min(CHUNK_SIZE, size - i * CHUNK_SIZE);
    const data = chunkBytes(seed, i, bytes);
    const file = path.join(dir, `chunk-${i}`);
    const fd = fs.openSync(file, 'w');
    fs.writeSync(fd, data);
    fs.fsyncSync(fd);
    fs.closeSync(fd);
    fs.writeSync(out, data);
    chunks.push({ file, bytes, sha256: crypto.createHash('sha256').update(data).digest('hex') });
  }
  // Written back before anything is timed (see interleave in stats.ts): left dirty, these
  // 2 × size bytes went out some 30 s later, in the middle of whichever contender ran then.
  fs.fsyncSync(out);
  fs.closeSync(out);
  fs.chmodSync(whole, 0o644);
  return { dir, size, chunks, whole };
}

/** curl's form for chunk `i` of `src` as spec §7 sends it: the text fields, then the chunk. */
function chunkForm(src: Source, i: number, token: string, uploadId: string, name: string): string[] {
  const c = src.chunks[i]!;
  const fields = { token, uploadId, originalname: name, totalChunks: src.chunks.length, chunkIndex: i, fileSize: src.size, chunkHash: c.sha256 };
  return [...Object.entries(fields).flatMap(([k, v]) => ['-F', `${k}=${v}`]), '-F', `file=@${c.file};type=application/octet-stream`];
}

/** Spec §7 chunked upload with curl (the issue's client); resolves with the file's url. */
export async function stashUpload(server: BenchServer, token: string, src: Source, name = 'ingest.bin'): Promise<string> {
  const uploadId = crypto.randomUUID();
  let url = '';
  for (const i of src.chunks.keys()) {
    const out = await curl([...chunkForm(src, i, token, uploadId, name), '-w', '\n%{http_code}', `${server.apiUrl}/api/v1/files/upload`]);
    const status = out.slice(out.lastIndexOf('\n') + 1);
    const text = out.slice(0, out.lastIndexOf('\n'));
    if (status !== '200') throw new Error(`chunk ${i} of ${name}: ${status} ${text.slice(0, 300)}`);
    const body = JSON.parse(text) as { url?: string };
    if (body.url) url = body.url;
  }
  return url;
}

/** The same requests as stashUpload (fields, then the chunk) into the ingest floor, which keeps each chunk and answers once it is synced. */
async function floorUpload(floorUrl: string, src: Source): Promise<void> {
  for (const i of src.chunks.keys()) await curl(['-o', '/dev/null', ...chunkForm(src, i, 'floor', 'floor', 'ingest.bin'), floorUrl]);
}

/** The same bytes through the tus protocol (creation + one PATCH per chunk). */
export async function tusUpload(tusUrl: string, src: Source): Promise<void> {
  const head = await curl(['-i', '-X', 'POST', '-H', 'Tus-Resumable: 1.0.0', '-H', `Upload-Length: ${src.size}`, `${tusUrl}/files`]);
  const location = /^location:\s*(\S+)/im.exec(head)?.[1];
  if (!location) throw new Error(`tus: no Location in ${head}`);
  const target = new URL(location, tusUrl).toString();
  let offset = 0;
  for (const c of src.chunks) {
    await curl(['-o', '/dev/null', '-X', 'PATCH', '-H', 'Tus-Resumable: 1.0.0', '-H', `Upload-Offset: ${offset}`, '-H', 'Content-Type: application/offset+octet-stream', '-T', c.file, target]);
    offset += c.bytes;
  }
}

const mibps = (bytes: number, t0: number) => bytes / MB / ((performance.now() - t0) / 1000);

async function timeGet(url: string, range?: string): Promise<number> {
  const out = await curl(['-o', '/dev/null', '-w', '%{time_total}', ...(range ? ['-r', range] : []), url]);
  return Number(out) * 1000;
}

function wrk(url: string, seconds: number): { rps: number; p99: number } {
  const res = spawnSync('wrk', ['-t2', '-c50', `-d${seconds}s`, '--latency', url], { encoding: 'utf8' });
  // A refused request (a 429 past the limit) is fast and would pass for a served one.
  const refused = /Non-2xx or 3xx responses:\s*(\d+)/.exec(res.stdout)?.[1];
  if (refused) throw new Error(`wrk ${url}: ${refused} answers were not 2xx`);
  const rps = Number(/Requests\/sec:\s*([\d.]+)/.exec(res.stdout)?.[1] ?? 0);
  const p99raw = /99%\s+([\d.]+)(us|ms|s)/.exec(res.stdout);
  const unit = { us: 0.001, ms: 1, s: 1000 } as const;
  const p99 = p99raw ? Number(p99raw[1]) * unit[p99raw[2] as keyof typeof unit] : NaN;
  return { rps, p99 };
}

/** One server's ingest contender: uploads `src`, deletes its previous copy, returns MiB/s; `url()` is the last file's url. */
function ingestInto(server: BenchServer, token: string, src: Source) {
  let url = '';
  return {
    url: () => url,
    run: async () => {
      const t0 = performance.now();
      const got = await stashUpload(server, token, src);
      const rate = mibps(src.size, t0);
      if (url) await fetch(`${server.apiUrl}/api/v1/files/delete`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ token, filePath: url }) });
      url = got;
      return rate;
    },
  };
}

/**
 * Issue 9: ingest against dd and tus; download, Range and 4 kB files against nginx; all interleaved.
 * Issue 10: the same ingest and download through a server on S3 (moto), interleaved with the
 * local-disk ones and given as a ratio of medians to the local-disk row of the same run.
 */
export async function ingestAndDownload(): Promise<Row[]> {
  const src = makeSource(SIZE, 7);
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'stash-anchor-'));
  const server = await startServer();
  const token = await login(server.apiUrl);
  const tusDir = path.join(work, 'tus');
  fs.mkdirSync(tusDir);
  const tus = await startTus(tusDir);
  const floorDir = path.join(work, 'floor');
  fs.mkdirSync(floorDir);
  const floor = await startIngestFloor(floorDir);
  const rows: Row[] = [];
  const label = `${(SIZE / MB).toFixed(0)} MiB in ${src.chunks.length} chunks`;
  const local = ingestInto(server, token, src);
  // The same server with each disk path fixed, past the page cache (STORAGE_DIRECT_WRITES=true)
  // and through it (false): what the default's choice between them (auto) is worth, in this run
  // (bench/README, the direct writes' rows).
  const directServer = await startServer({ STORAGE_DIRECT_WRITES: 'true' });
  const direct = ingestInto(directServer, await login(directServer.apiUrl), src);
  const cacheServer = await startServer({ STORAGE_DIRECT_WRITES: 'false' });
  const cached = ingestInto(cacheServer, await login(cacheServer.apiUrl), src);
  const s3 = await startS3Bench();
  const s3Ingest = typeof s3 === 'string' ? null : ingestInto(s3.server, s3.token, src);
  try {
    // CPU seconds per run of the server (Stash's, the tus server's) and of dd: where the time
    // goes on two cores shared with curl (bench/README.md, "Ingest, where the time goes").
    const cpu = { stash: [] as number[], direct: [] as number[], cached: [] as number[], tus: [] as number[], dd: [] as number[], ddNew: [] as number[], floor: [] as number[] };
    const dd = (out: string) => {
      const t0 = performance.now();
      const r = spawnSync('dd', [`if=${src.whole}`, `of=${out}`, 'bs=8M', 'conv=fdatasync'], { stdio: 'ignore' });
      if (r.status !== 0) throw new Error('dd failed');
      return mibps(SIZE, t0);
    };
    const ingest = await interleave(
      {
        stash: () => withCpu([[cpu.stash, () => processCpu(server.pid)]], local.run),
        direct: () => withCpu([[cpu.direct, () => processCpu(directServer.pid)]], direct.run),
        cached: () => withCpu([[cpu.cached, () => processCpu(cacheServer.pid)]], cached.run),
        ...(s3Ingest ? { s3: s3Ingest.run } : {}),
        // The issue's anchor: the same file written over (truncated) in every round.
        dd: () => withCpu([[cpu.dd, endedChildrenCpu]], async () => dd(path.join(work, 'dd.bin'))),
        // A new file in every round, removed once timed, as each upload (and the tus server's) is
        // a new file: on these virtual machines what the kernel's page-cache writes cost depends
        // on which free pages it is given (bench/README.md, the direct writes' row).
        ddNew: () => withCpu([[cpu.ddNew, endedChildrenCpu]], async () => {
          const out = path.join(work, `dd-${crypto.randomUUID()}.bin`);
          const rate = dd(out);
          fs.rmSync(out);
          return rate;
        }),
        tus: () => withCpu([[cpu.tus, () => processCpu(tus.pid)]], async () => {
          const t0 = performance.now();
          await tusUpload(tus.url, src);
          const rate = mibps(SIZE, t0);
          fs.rmSync(tusDir, { recursive: true, force: true });
          fs.mkdirSync(tusDir);
          return rate;
        }),
        floor: () => withCpu([[cpu.floor, () => processCpu(floor.pid)]], async () => {
          const t0 = performance.now();
          await floorUpload(floor.url, src);
          return mibps(SIZE, t0);
        }),
      },
      ROUNDS,
    );
    rows.push({
      benchmark: `ingest ${label}, curl (SHA-256 checked)`,
      stash: `${rateSummary(ingest.stash!)}${canMeasureCpu ? `; server CPU ${cpuSummary(cpu.stash)}` : ''}`,
      baselineName: 'dd bs=8M conv=fdatasync / tus server',
      baseline: `${rateSummary(ingest.dd!)} / ${rateSummary(ingest.tus!)}${canMeasureCpu ? `; CPU dd ${cpuSummary(cpu.dd)}, tus server ${cpuSummary(cpu.tus)}` : ''}`,
      ratio: `${ratio(ingest.stash!, ingest.dd!)} dd, ${ratio(ingest.stash!, ingest.tus!)} tus`,
    });
    rows.push({
      benchmark: `ingest floor: the same curl requests into the least a Node server can do (same parser → file, fdatasync every 8 MiB in the background and once at the end of each chunk; no hash, no database)`,
      stash: rateSummary(ingest.stash!),
      baselineName: 'the floor / dd',
      baseline: `${rateSummary(ingest.floor!)}${canMeasureCpu ? `; CPU ${cpuSummary(cpu.floor)}` : ''} / ${rateSummary(ingest.dd!)}`,
      ratio: `${ratio(ingest.stash!, ingest.floor!)} the floor; the floor ${ratio(ingest.floor!, ingest.dd!)} dd`,
    });
    rows.push({
      benchmark: `ingest ${label}: dd into a new file each time (conv=fdatasync), as an upload is`,
      stash: rateSummary(ingest.stash!),
      baselineName: 'dd into a new file',
      baseline: `${rateSummary(ingest.ddNew!)}${canMeasureCpu ? `; CPU ${cpuSummary(cpu.ddNew)}` : ''}`,
      ratio: `${ratio(ingest.stash!, ingest.ddNew!)}`,
    });
    rows.push({
      benchmark: `ingest ${label}: the same server with its disk path fixed, past the page cache (STORAGE_DIRECT_WRITES=true) and through it (false), the same requests; Stash's default (auto) chooses between them`,
      stash: `${rateSummary(ingest.stash!)}${canMeasureCpu ? `; server CPU ${cpuSummary(cpu.stash)}` : ''}`,
      baselineName: 'past the page cache (O_DIRECT) / through it',
      baseline: `${rateSummary(ingest.direct!)}${canMeasureCpu ? `; server CPU ${cpuSummary(cpu.direct)}` : ''} / ${rateSummary(ingest.cached!)}${canMeasureCpu ? `; server CPU ${cpuSummary(cpu.cached)}` : ''}`,
      ratio: `${ratio(ingest.stash!, ingest.direct!)} past it, ${ratio(ingest.stash!, ingest.cached!)} through it${chosenPath(server)}`,
    });
    rows.push(s3Row(`ingest ${label} on S3 (moto), curl (SHA-256 checked)`, s3, ingest.s3, ingest.stash!));

    rows.push(...(await serving(server, token, local.url(), src, work, typeof s3 === 'string' || !s3Ingest ? null : { server: s3.server, env: s3.env, url: s3Ingest.url() })));
  } finally {
    await tus.stop();
    await floor.stop();
    await server.stop();
    await directServer.stop();
    await cacheServer.stop();
    if (typeof s3 !== 'string') await s3.stop();
    for (const d of [src.dir, work, server.dataDir, directServer.dataDir, cacheServer.dataDir]) fs.rmSync(d, { recursive: true, force: true });
  }
  return rows;
}

/**
 * `npm run bench -- download`: only the files host against nginx (the file is uploaded once,
 * not timed), for working on serving without the minutes of ingest rounds.
 */
export async function downloadOnly(): Promise<Row[]> {
  const src = makeSource(SIZE, 7);
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'stash-anchor-'));
  const server = await startServer();
  try {
    const url = await stashUpload(server, await login(server.apiUrl), src);
    return await serving(server, await login(server.apiUrl), url, src, work, null);
  } finally {
    await server.stop();
    for (const d of [src.dir, work, server.dataDir]) fs.rmSync(d, { recursive: true, force: true });
  }
}

/** Download, Range and 4 kB requests of the files host against nginx serving the same bytes, interleaved. */
async function serving(server: BenchServer, token: string, url: string, src: Source, work: string, s3: { server: BenchServer; env: Record<string, string>; url: string } | null): Promise<Row[]> {
  const rows: Row[] = [];
  if (!hasNginx()) {
    rows.push({ benchmark: 'downloads', stash: 'not run', baselineName: 'nginx', baseline: 'apt-get install nginx' });
    return rows;
  }
  // nginx serves the very bytes Stash stored, from the page cache like Stash's copy.
  const nginxRoot = path.join(work, 'www');
  fs.mkdirSync(nginxRoot, { mode: 0o755 });
  fs.chmodSync(work, 0o755);
  fs.linkSync(src.whole, path.join(nginxRoot, 'file.bin'));
  const small = makeSource(4096, 9);
  fs.copyFileSync(small.whole, path.join(nginxRoot, 'small.bin'));
  fs.chmodSync(path.join(nginxRoot, 'small.bin'), 0o644);
  const smallUrl = await stashUpload(server, token, small, 'small.bin');
  const nginx = await startNginx(nginxRoot, work);
  const floor = await startServeFloor(nginxRoot);
  // The files host as a deployment on this machine would run it, one process per core as nginx's
  // `worker_processes auto` does (README "Configuration", FILES_PROCESSES), on the same data.
  let filesHost: BenchServer | null = null;
  let limited: BenchServer | null = null;
  let handing: BenchServer | null = null;
  let front: Anchor | null = null;
  let proxy: Anchor | null = null;
  let s3Handing: BenchServer | null = null;
  let s3Front: Anchor | null = null;
  try {
    filesHost = await startServer({ STASH_ROLES: 'files', FILES_PROCESSES: String(FILES_PROCESSES) }, server.dataDir);
    // Rate limits on, as `npm start` runs (design §6), at a limit wrk stays under: every request
    // is counted and carries its x-ratelimit-* headers.
    limited = await startServer({ STASH_ROLES: 'files', RATE_LIMITS: 'on', FILES_RATE_LIMIT: '1000000' }, server.dataDir);
    // nginx in front of a files host that hands it downloads (FILES_ACCEL_REDIRECT), both as
    // README's "Deployment at scale" configures them, on the same data.
    // TRUST_PROXY as README sets it behind a proxy: every connection comes from nginx, so no
    // per-address cap on connections (MAX_CONNECTIONS_PER_IP, 64 otherwise, which nginx opening
    // one per request went past under wrk -c50).
    handing = await startServer({ STASH_ROLES: 'files', FILES_ACCEL_REDIRECT: ACCEL_PREFIX, TRUST_PROXY: '127.0.0.1' }, server.dataDir);
    const frontWork = path.join(work, 'nginx-in-front');
    fs.mkdirSync(frontWork);
    const upstream = new URL(handing.filesUrl).host;
    front = await startNginxIn(frontWork, (port) => filesHostServer({ port, upstream, filesDir: path.join(server.dataDir, 'storage', 'files'), prefix: ACCEL_PREFIX }));
    // The same nginx block without the hand-over: what README's configuration gave before it,
    // every byte copied by Stash and again by nginx's proxy.
    const proxyWork = path.join(work, 'nginx-proxying');
    fs.mkdirSync(proxyWork);
    proxy = await startNginxIn(proxyWork, (port) => `server { listen 127.0.0.1:${port}; location / { proxy_pass http://${upstream}; proxy_buffering off; proxy_set_header Host $host; } }`);
    // On S3 the same: a files host handing downloads over (a signed read of the object) to nginx
    // in front, which fetches them from the store (README's S3 location).
    if (s3) {
      s3Handing = await startServer({ ...s3.env, STASH_ROLES: 'files', FILES_ACCEL_REDIRECT: S3_ACCEL_PREFIX }, s3.server.dataDir);
      const s3Work = path.join(work, 'nginx-in-front-of-s3');
      fs.mkdirSync(s3Work);
      const s3Upstream = new URL(s3Handing.filesUrl).host;
      s3Front = await startNginxIn(s3Work, (port) => filesHostServer({ port, upstream: s3Upstream, storeOrigin: s3.env.S3_ENDPOINT!, prefix: S3_ACCEL_PREFIX }));
    }
    const handingPid = handing.pid;
    // Every nginx instance is counted; those not in use spend nothing meanwhile.
    const handingCpu = () => processCpu(handingPid) + cpuOfProgram('nginx');
    const frontName = `${front.url}/${url.split('/').pop()}`;
    const proxyName = `${proxy.url}/${url.split('/').pop()}`;
    const stashName = `${server.filesUrl}/${url.split('/').pop()}`;
    const s3Name = s3 ? `${s3.server.filesUrl}/${s3.url.split('/').pop()}` : null;
    const s3FrontName = s3 && s3Front ? `${s3Front.url}/${s3.url.split('/').pop()}` : null;
    const rate = (u: string) => async () => (SIZE / MB) / ((await timeGet(u)) / 1000);
    // Server CPU per GiB sent: Node's read-then-write path copies every byte into the process and
    // out again, where nginx's sendfile hands the page cache's pages to the socket.
    const dlCpu = { stash: [] as number[], nginx: [] as number[], floor: [] as number[], front: [] as number[], proxy: [] as number[], s3: [] as number[], s3Front: [] as number[], s3FrontNginx: [] as number[] };
    const metered = (samples: number[], read: () => number, u: string) => () => withCpu([[samples, read]], rate(u));
    const gib = (samples: number[]) => (median(samples) / (SIZE / MB / 1024)).toFixed(2);
    const perGiB = (samples: number[]) => (canMeasureCpu ? `; CPU ${gib(samples)} s per GiB` : '');
    const floorName = `${floor.url}/file.bin`;
    const nginxName = `${nginx.url}/file.bin`;
    for (const u of [stashName, nginxName, floorName, frontName, proxyName, s3Name, s3FrontName]) if (u) await timeGet(u);
    // The Node floor beside nginx: how much of nginx's lead any Node server gives up.
    const dl = await interleave(
      {
        stash: metered(dlCpu.stash, () => processCpu(server.pid), stashName),
        nginx: metered(dlCpu.nginx, () => cpuOfProgram('nginx'), nginxName),
        floor: metered(dlCpu.floor, () => processCpu(floor.pid), floorName),
        front: metered(dlCpu.front, handingCpu, frontName),
        proxy: metered(dlCpu.proxy, handingCpu, proxyName),
        ...(s3Name ? { s3: metered(dlCpu.s3, () => processCpu(s3!.server.pid), s3Name) } : {}),
        ...(s3FrontName && s3Handing
          ? { s3Front: () => withCpu([[dlCpu.s3Front, () => processCpu(s3Handing!.pid)], [dlCpu.s3FrontNginx, () => cpuOfProgram('nginx')]], rate(s3FrontName)) }
          : {}),
      },
      options.quick ? 3 : 5,
    );
    rows.push({
      benchmark: `download ${(SIZE / MB).toFixed(0)} MiB (warm cache, curl)`,
      stash: `${rateSummary(dl.stash!)}${perGiB(dlCpu.stash)}`,
      baselineName: 'nginx, same bytes / the Node floor (serve-floor.mjs)',
      baseline: `${rateSummary(dl.nginx!)}${perGiB(dlCpu.nginx)} / ${rateSummary(dl.floor!)}${perGiB(dlCpu.floor)}`,
      ratio: `${ratio(dl.stash!, dl.nginx!)}; ${ratio(dl.stash!, dl.floor!)} the floor, the floor ${ratio(dl.floor!, dl.nginx!)} nginx`,
    });
    rows.push({
      benchmark: `download ${(SIZE / MB).toFixed(0)} MiB through nginx in front of the files host (README's configuration, FILES_ACCEL_REDIRECT: Stash answers, nginx sends the bytes)`,
      stash: `${rateSummary(dl.front!)}${perGiB(dlCpu.front)}`,
      baselineName: 'nginx alone, same bytes / the same nginx proxying the files host, no hand-over',
      baseline: `${rateSummary(dl.nginx!)}${perGiB(dlCpu.nginx)} / ${rateSummary(dl.proxy!)}${perGiB(dlCpu.proxy)}`,
      ratio: `${ratio(dl.front!, dl.nginx!)} nginx alone; ${ratio(dl.front!, dl.proxy!)} the proxied files host`,
    });
    if (s3) rows.push(s3Row(`download ${(SIZE / MB).toFixed(0)} MiB from S3 (moto), curl`, s3, dl.s3, dl.stash!));
    if (dl.s3 && dl.s3Front) {
      rows.push({
        benchmark: `download ${(SIZE / MB).toFixed(0)} MiB from S3 (moto) through nginx in front (README's S3 location, FILES_ACCEL_REDIRECT: Stash answers with a signed read, nginx fetches the bytes from the store)`,
        stash: `${rateSummary(dl.s3Front)}${canMeasureCpu ? `; CPU per GiB: Stash ${gib(dlCpu.s3Front)} s, nginx ${gib(dlCpu.s3FrontNginx)} s` : ''}`,
        baselineName: 'the files host on S3 sending the bytes itself (curl to it)',
        baseline: `${rateSummary(dl.s3)}${canMeasureCpu ? `; CPU per GiB: Stash ${gib(dlCpu.s3)} s` : ''}`,
        ratio: `${ratio(dl.s3Front, dl.s3)}${canMeasureCpu ? `; Stash's CPU ${(median(dlCpu.s3Front) / median(dlCpu.s3)).toFixed(3)} ×` : ''}`,
      });
    }

    const range = await interleave(
      {
        stash: () => timeGet(stashName, `-${MB}`),
        nginx: () => timeGet(nginxName, `-${MB}`),
        floor: () => timeGet(floorName, `-${MB}`),
        front: () => timeGet(frontName, `-${MB}`),
      },
      options.quick ? 15 : 40,
    );
    rows.push({
      benchmark: 'Range: last 1 MiB (curl, new connection each)',
      stash: timeSummary(range.stash!),
      baselineName: 'nginx / the Node floor (serve-floor.mjs)',
      baseline: `${timeSummary(range.nginx!)} / ${timeSummary(range.floor!)}`,
      ratio: `${(median(range.stash!) / median(range.nginx!)).toFixed(2)} × nginx's time; ${(median(range.stash!) / median(range.floor!)).toFixed(2)} × the floor's, the floor ${(median(range.floor!) / median(range.nginx!)).toFixed(2)} × nginx's`,
    });

    rows.push({
      benchmark: 'Range: last 1 MiB through nginx in front of the files host (FILES_ACCEL_REDIRECT)',
      stash: timeSummary(range.front!),
      baselineName: 'nginx alone',
      baseline: timeSummary(range.nginx!),
      ratio: `${(median(range.front!) / median(range.nginx!)).toFixed(2)} × nginx's time`,
    });

    const smallName = smallUrl.split('/').pop();
    rows.push(...smallFiles(server, smallUrl, `${nginx.url}/small.bin`, `${floor.url}/small.bin`, filesHost, limited, { front: `${front.url}/${smallName}`, proxy: `${proxy.url}/${smallName}` }));
  } finally {
    await nginx.stop();
    await floor.stop();
    await filesHost?.stop();
    await limited?.stop();
    await front?.stop();
    await proxy?.stop();
    await handing?.stop();
    await s3Front?.stop();
    await s3Handing?.stop();
    fs.rmSync(small.dir, { recursive: true, force: true });
  }
  return rows;
}

const FILES_PROCESSES = os.availableParallelism();

/** What the default server's uploads chose (its log's last `storage: uploads are written …` line), for the fixed-path row. */
function chosenPath(server: BenchServer): string {
  const told = server.output().split('\n').filter((line) => line.startsWith('storage: uploads are written'));
  const last = told.at(-1);
  return last ? `; auto: ${last.replace(/^storage: uploads are written /, '').replace(/ \(STORAGE_DIRECT_WRITES=auto.*$/, '')}` : '';
}

/** FILES_ACCEL_REDIRECT of the files host behind nginx, as README's configuration names it. */
const ACCEL_PREFIX = '/_stash_files/';
const S3_ACCEL_PREFIX = '/_stash_s3/';

/**
 * 4 kB requests under wrk, each name asked for with HEAD first: Stash's files host as one process
 * (the default), as one process per core, and as one process with rate limits on (as `npm start`
 * runs; the bench's servers run with RATE_LIMITS=off), against nginx with a worker per core; all
 * interleaved, each warmed first.
 * `behind`: one files process behind nginx as README configures it (`front`, connections kept
 * open by `upstream … keepalive`) and behind the same nginx block without the kept connections
 * (`proxy`, README's configuration before them).
 */
function smallFiles(server: BenchServer, smallUrl: string, nginxUrl: string, floorUrl: string, filesHost: BenchServer, limited: BenchServer, behind: { front: string; proxy: string }): Row[] {
  const seconds = options.quick ? 2 : 8;
  // --quick: one run each after a 1 s warm-up (seven servers' rows had taken a minute of it).
  // Three otherwise, so the median is the middle run: of two it was the lower rate (and the lower
  // p99), and one Node process's rate swings between two levels from run to run on these hosts
  // (38-41,000 and 50-61,000 4 kB requests a second, bench/README "4 kB files: one process, two
  // speeds"), so a row had shown the slow level whenever either run fell on it.
  const runs = options.quick ? 1 : 3;
  const warmup = options.quick ? 1 : 2;
  const name = smallUrl.split('/').pop();
  const urls = { one: `${server.filesUrl}/${name}`, many: `${filesHost.filesUrl}/${name}`, limited: `${limited.filesUrl}/${name}`, nginx: nginxUrl, floor: floorUrl, ...behind };
  const w: Record<keyof typeof urls, { rps: number; p99: number }[]> = { one: [], many: [], limited: [], nginx: [], floor: [], front: [], proxy: [] };
  // Warmed first, as a server in service is: a fresh Node process's first seconds under wrk run
  // code V8 has not optimised yet, and their p99 was 2-4 x the later runs'.
  // Each name is first asked for with HEAD, as a link previewer asks for a file shared in a chat,
  // before any GET: a files host that cached the name without its bytes then served every later
  // 4 kB GET from disk (0.27 x the floor against 0.64 x, bench/README.md).
  for (const url of Object.values(urls)) {
    if (spawnSync('curl', ['-sfI', '-o', '/dev/null', url]).status !== 0) throw new Error(`HEAD ${url} failed`);
  }
  for (const url of Object.values(urls)) wrk(url, warmup);
  for (let r = 0; r < runs; r++) for (const [k, url] of Object.entries(urls)) w[k as keyof typeof urls].push(wrk(url, seconds));
  const med = (list: { rps: number; p99: number }[], k: 'rps' | 'p99') => median(list.map((x) => x[k]));
  const best = (list: { rps: number; p99: number }[]) => (list.length > 1 ? ` (best ${Math.max(...list.map((x) => x.rps)).toFixed(0)})` : '');
  const rate = (list: { rps: number; p99: number }[]) => `${med(list, 'rps').toFixed(0)} req/s${best(list)}, p99 ${ms(med(list, 'p99'))}`;
  const nginx = rate(w.nginx);
  const row = (label: string, list: { rps: number; p99: number }[]): Row => ({
    benchmark: `4 kB file, ${label}, wrk -t2 -c50 -d${seconds}s (${runs} run${runs > 1 ? 's' : ''} each, after a ${warmup} s warm-up)`,
    stash: rate(list),
    baselineName: `nginx (${FILES_PROCESSES} workers)`,
    baseline: nginx,
    ratio: `${(med(list, 'rps') / med(w.nginx, 'rps')).toFixed(2)} × req/s, ${(med(list, 'p99') / med(w.nginx, 'p99')).toFixed(2)} × p99`,
  });
  // One Node process doing the least a server can (serve-floor.mjs): what one files process is
  // measured against besides nginx, whose workers are C on every core.
  const floor: Row = {
    benchmark: `4 kB file, the Node floor (serve-floor.mjs, one process), wrk -t2 -c50 -d${seconds}s`,
    stash: `one files process: ${rate(w.one)}`,
    baselineName: 'the Node floor',
    baseline: rate(w.floor),
    ratio: `${(med(w.one, 'rps') / med(w.floor, 'rps')).toFixed(2)} × the floor's req/s; the floor ${(med(w.floor, 'rps') / med(w.nginx, 'rps')).toFixed(2)} × nginx's`,
  };
  const front: Row = {
    benchmark: `4 kB file through nginx in front of one files process (README's configuration: connections to it kept, upstream keepalive), wrk -t2 -c50 -d${seconds}s`,
    stash: rate(w.front),
    baselineName: 'nginx alone / the same nginx block opening a connection per request (README before keepalive)',
    baseline: `${rate(w.nginx)} / ${rate(w.proxy)}`,
    ratio: `${(med(w.front, 'rps') / med(w.nginx, 'rps')).toFixed(2)} × nginx's req/s; ${(med(w.front, 'rps') / med(w.proxy, 'rps')).toFixed(2)} × without keepalive, p99 ${(med(w.front, 'p99') / med(w.proxy, 'p99')).toFixed(2)} ×`,
  };
  return [row('one files process', w.one), row(`FILES_PROCESSES=${FILES_PROCESSES}`, w.many), row('one files process, rate limits on', w.limited), floor, front];
}

/** An S3 row beside the local-disk row it repeats, or why it could not run. */
function s3Row(benchmark: string, s3: unknown, samples: number[] | undefined, localDisk: number[]): Row {
  if (typeof s3 === 'string' || !samples) return { benchmark, stash: 'not run', baselineName: 'Stash on local disk', baseline: typeof s3 === 'string' ? s3 : 'no S3 server' };
  return { benchmark, stash: rateSummary(samples), baselineName: 'Stash on local disk, same run', baseline: rateSummary(localDisk), ratio: `${ratio(samples, localDisk)} local disk` };
}
