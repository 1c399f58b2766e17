import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort } from '../../helpers/free-port.ts';
import { serverEnv, spawnServer, waitForFilesProcesses, waitForHealth, type ServerProcess } from '../../helpers/server-process.ts';
import { sendMultipart } from '../../helpers/upload.ts';
import { SERVER_ENTRY, SERVER_ENV, SERVER_NODE_FLAGS, buildServer, serverBuildIsStale } from '../../../scripts/server-build.mjs';

const ROOT = path.resolve(import.meta.dirname, '../../..');

/** Issue 9, a lean process: `npm start` runs the server compiled to JavaScript, rebuilt when stale. */
describe('the compiled server', () => {
  const cleanup: (() => Promise<void> | void)[] = [];
  afterAll(async () => {
    for (const f of cleanup.reverse()) await f();
  });

  it('is rebuilt when missing or older than a server or contract source', async () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'stash-server-build-'));
    cleanup.push(() => fs.rmSync(root, { recursive: true, force: true }));
    const touch = (rel: string, secondsAgo: number) => {
      const file = path.join(root, rel);
      fs.mkdirSync(path.dirname(file), { recursive: true });
      if (!fs.existsSync(file)) fs.writeFileSync(file, 'x');
      const when = new Date(Date.now() - secondsAgo * 1000);
      fs.utimesSync(file, when, when);
    };
    touch('server/main.ts', 300);
    touch('contract/files.ts', 300);
    expect(serverBuildIsStale(root)).toBe(true);
    touch(SERVER_ENTRY, 60);
    expect(serverBuildIsStale(root)).toBe(false);
    touch('server/modules/files/files.repository.ts', 5);
    expect(serverBuildIsStale(root)).toBe(true);
    touch(SERVER_ENTRY, 1);
    touch('contract/files.ts', 0);
    expect(serverBuildIsStale(root)).toBe(true);
  });

  it("bundles the packages loaded at start, and loads PostgreSQL, Redis, the S3 SDK, the type sniffers, argon2 and the URL fetcher's address filter only when a request or the configuration needs them", async () => {
    const outDir = fs.mkdtempSync(path.join(ROOT, 'dist-server-test-'));
    cleanup.push(() => fs.rmSync(outDir, { recursive: true, force: true }));
    const entry = await buildServer(ROOT, outDir);
    const code = fs.readFileSync(entry, 'utf8');
    // A static import would load the package into every process at start, whatever it serves;
    // together these are ~60 MiB of an idle SQLite + local-disk process (bench/README.md).
    const staticImports = [...code.matchAll(/(?:^|;)import\b[^;]*?from\s*"([^"]+)"/gm)].map((m) => m[1] ?? '');
    const packages = staticImports.filter((i) => !i.startsWith('./') && !i.startsWith('node:'));
    // Fastify, Kysely, TypeBox… are in the bundle (one module, not a thousand); only the native
    // SQLite binding is still loaded from node_modules at start.
    expect(packages).toEqual(['better-sqlite3']);
    expect(code).toContain('FST_ERR_'); // Fastify's own code
    const chunks = fs.readdirSync(path.dirname(entry)).filter((f) => f.endsWith('.mjs'));
    const eager = staticImports.filter((i) => i.startsWith('./')).map((i) => fs.readFileSync(path.join(path.dirname(entry), i), 'utf8'));
    for (const lazy of ['pg', 'ioredis', 'file-type', 'image-size', '@node-rs/argon2', 'request-filtering-agent']) {
      expect([code, ...eager].join('\n')).toContain(`import("${lazy}")`);
    }
    for (const chunk of eager) expect(chunk).not.toMatch(/from\s*"@aws-sdk\//);
    const s3 = chunks.find((f) => /^s3-/.test(f));
    expect(s3).toBeDefined();
    expect(fs.readFileSync(path.join(path.dirname(entry), s3 ?? ''), 'utf8')).toMatch(/from\s*"@aws-sdk\/client-s3"/);
    // The source map keeps our own code's mappings only (the packages' made it 1.9 MB, all read at start).
    const map = JSON.parse(fs.readFileSync(`${entry}.map`, 'utf8')) as { sources: string[] };
    expect(map.sources.some((source) => source.endsWith('server/main.ts'))).toBe(true);
    expect(map.sources.filter((source) => source.includes('node_modules'))).toEqual([]);
  });

  it('is swapped in whole: builds started together (two test runs, or `npm start` beside one) each leave a complete build', async () => {
    const parent = fs.mkdtempSync(path.join(ROOT, 'dist-server-test-'));
    cleanup.push(() => fs.rmSync(parent, { recursive: true, force: true }));
    const outDir = path.join(parent, 'dist-server');
    // Separate processes, as two test runs are: each one's esbuild writes while another trims a map.
    const script = `import(${JSON.stringify(path.join(ROOT, 'scripts', 'server-build.mjs'))}).then((m) => m.buildServer(${JSON.stringify(ROOT)}, ${JSON.stringify(outDir)}))`;
    const builds = Array.from({ length: 3 }, () =>
      new Promise<number | null>((resolve) => {
        const child = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'ignore', 'inherit'] });
        child.on('exit', resolve);
      }),
    );
    expect(await Promise.all(builds)).toEqual([0, 0, 0]);
    // Every map was trimmed by the build that wrote it, once, and parses: none was read half-written.
    for (const file of fs.readdirSync(path.join(outDir, 'server')).filter((f) => f.endsWith('.map'))) {
      const map = JSON.parse(fs.readFileSync(path.join(outDir, 'server', file), 'utf8')) as { sources: string[] };
      expect(map.sources.filter((source) => source.includes('node_modules'))).toEqual([]);
    }
    // Nothing of the staging left beside it.
    expect(fs.readdirSync(parent)).toEqual(['dist-server']);
    // A build that finds an up-to-date one in place leaves it (and the chunks that processes
    // running from it may still load) untouched.
    const entry = path.join(outDir, 'server', 'main.mjs');
    const before = fs.statSync(entry).ino;
    await buildServer(ROOT, outDir);
    expect(fs.statSync(entry).ino).toBe(before);
    expect(fs.readdirSync(parent)).toEqual(['dist-server']);
  });

  it('starts from the compiled entry without tsx and serves the API, the files host (as two processes) and the site', async () => {
    const outDir = fs.mkdtempSync(path.join(ROOT, 'dist-server-test-'));
    cleanup.push(() => fs.rmSync(outDir, { recursive: true, force: true }));
    const entry = await buildServer(ROOT, outDir);
    expect(serverBuildIsStale(ROOT, outDir)).toBe(false);

    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'stash-compiled-'));
    cleanup.push(() => fs.rmSync(dataDir, { recursive: true, force: true }));
    const ports = { site: await freePort(), api: await freePort(), files: await freePort() };
    const server: ServerProcess = spawnServer(serverEnv(dataDir, ports, { NODE_OPTIONS: '', FILES_PROCESSES: '2' }), { compiled: entry });
    cleanup.push(() => server.stop());
    const origin = (port: number) => `http://127.0.0.1:${port}`;
    await waitForHealth(server, [origin(ports.site), origin(ports.api), origin(ports.files)], 30_000);
    // The files processes are forked with the primary's flags and environment (server/files-processes.ts).
    const filesProcesses = await waitForFilesProcesses(server, 2, 30_000);
    expect(filesProcesses).toHaveLength(2);
    for (const pid of [server.child.pid, ...filesProcesses]) {
      const cmdline = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
      expect(cmdline).toContain(entry);
      expect(cmdline.join(' ')).not.toMatch(/tsx/);
      // The memory settings `npm start` runs with (bench/README.md has what each bought).
      expect(cmdline).toEqual(expect.arrayContaining(SERVER_NODE_FLAGS));
      const environ = fs.readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0');
      for (const [name, value] of Object.entries(SERVER_ENV)) expect(environ).toContain(`${name}=${value}`);
    }

    const login = await fetch(`${origin(ports.api)}/api/v1/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ username: 'boss', password: 'boss-password' }),
    });
    expect(login.status).toBe(200);
    // The bundle spawns its metadata reader (issue 8 item 1) from beside main.mjs: an upload's
    // type and size come from the bytes, which a reader that failed to start would leave unknown.
    const { token } = (await login.json()) as { token: string };
    const gif = fs.readFileSync(path.join(ROOT, 'tests/server/files/fixtures/300x200.gif'));
    const uploaded = await sendMultipart(`${origin(ports.api)}/api/v1/files/upload`, { fields: { token }, file: { data: gif, filename: 'pic.gif' } });
    expect(uploaded.status, JSON.stringify(uploaded.body)).toBe(200);
    expect(uploaded.body.file).toMatchObject({ mime_type: 'image/gif', width: 300, height: 200 });
    const served = await fetch(`${origin(ports.files)}/${String(uploaded.body.url).split('/').pop()}`);
    expect(served.status).toBe(200);
    expect(Buffer.from(await served.arrayBuffer()).equals(gif)).toBe(true);
    const config = (await (await fetch(`${origin(ports.site)}/config.json`)).json()) as Record<string, unknown>;
    expect(config.apiUrl).toBeTypeOf('string');
    const missing = await fetch(`${origin(ports.files)}/abcdefghij.png`);
    expect(missing.status).toBe(404);
  });
});
