import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { freePort } from '../../helpers/free-port.ts';
import { isHealthy, serverEnv, spawnServer, waitForHealth, type ServerProcess } from '../../helpers/server-process.ts';
import { afterEach, describe, expect, it } from 'vitest';

type Role = 'site' | 'api' | 'files';

interface Running extends ServerProcess {
  dataDir: string;
  ports: Record<Role, number>;
}

const started: Running[] = [];

async function start(env: Record<string, string> = {}): Promise<Running> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'stash-main-'));
  const ports = { site: await freePort(), api: await freePort(), files: await freePort() };
  const server = spawnServer(serverEnv(dataDir, ports, env));
  const running = { ...server, dataDir, ports };
  started.push(running);
  return running;
}

const origin = (port: number) => `http://127.0.0.1:${port}`;
const healthy = (port: number) => isHealthy(origin(port));
const waitHealthy = (r: Running, roles: Role[]) =>
  waitForHealth(
    r,
    roles.map((role) => origin(r.ports[role])),
    30_000,
  );

afterEach(async () => {
  for (const r of started.splice(0)) {
    if (r.child.exitCode === null) {
      r.child.kill('SIGKILL');
      await r.exited;
    }
    fs.rmSync(r.dataDir, { recursive: true, force: true });
  }
});

describe('the server process (issue 2: listeners, roles, shutdown)', () => {
  it('refuses to start on bad configuration, naming every bad variable', async () => {
    const r = await start({ API_PORT: 'eighty', STORAGE_DRIVER: 'tape', STASH_ROLES: 'api,mail' });
    expect(await r.exited).toBe(1);
    expect(r.output()).toContain('API_PORT');
    expect(r.output()).toContain('STORAGE_DRIVER');
    expect(r.output()).toContain('STASH_ROLES');
  });

  it('serves all three origins by default, prints the first admin and an invite key, and answers /healthz', async () => {
    const r = await start();
    await waitHealthy(r, ['site', 'api', 'files']);
    expect(r.output()).toMatch(/username: boss/);
    expect(r.output()).toMatch(/invite key: [A-Za-z0-9_-]{10,}/);
    const config = (await (await fetch(`http://127.0.0.1:${r.ports.site}/config.json`)).json()) as Record<string, unknown>;
    expect(config.chunkSize).toBe(83_886_080);
    const login = await fetch(`http://127.0.0.1:${r.ports.api}/api/v1/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ username: 'boss', password: 'boss-password' }),
    });
    expect(login.status).toBe(200);
  });

  it('logs requests at LOG_LEVEL=info but not the /healthz polls', async () => {
    const r = await start({ STASH_ROLES: 'site', LOG_LEVEL: 'info' });
    await waitHealthy(r, ['site']);
    await fetch(`http://127.0.0.1:${r.ports.site}/config.json`);
    await expect.poll(() => r.output()).toContain('"url":"/config.json"');
    expect(r.output()).not.toContain('"url":"/healthz"');
  });

  it('runs only the roles STASH_ROLES names', async () => {
    const r = await start({ STASH_ROLES: 'api' });
    await waitHealthy(r, ['api']);
    expect(await healthy(r.ports.site)).toBe(false);
    expect(await healthy(r.ports.files)).toBe(false);
  });

  it('on SIGTERM lets an upload in flight finish, stops listening and closes the database cleanly', async () => {
    const r = await start({ STASH_ROLES: 'api' });
    await waitHealthy(r, ['api']);
    const login = await fetch(`http://127.0.0.1:${r.ports.api}/api/v1/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ username: 'boss', password: 'boss-password' }),
    });
    const { token } = (await login.json()) as { token: string };

    const boundary = `----stash${crypto.randomBytes(6).toString('hex')}`;
    const content = Buffer.from('a slow upload that is still arriving when the server is told to stop\n'.repeat(2000));
    const head = Buffer.from(
      `--${boundary}\r\nContent-Disposition: form-data; name="token"\r\n\r\n${token}\r\n` +
        `--${boundary}\r\nContent-Disposition: form-data; name="originalname"\r\n\r\nslow.txt\r\n` +
        `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="slow.txt"\r\nContent-Type: text/plain\r\n\r\n`,
    );
    const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
    const half = Math.floor(content.length / 2);
    const answer = new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = http.request(
        {
          host: '127.0.0.1',
          port: r.ports.api,
          method: 'POST',
          path: '/api/v1/files/upload',
          headers: { 'content-type': `multipart/form-data; boundary=${boundary}`, 'content-length': head.length + content.length + tail.length },
        },
        (res) => {
          let body = '';
          res.on('data', (d: Buffer) => (body += d.toString()));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
        },
      );
      req.on('error', reject);
      req.write(head);
      req.write(content.subarray(0, half));
      setTimeout(() => {
        r.child.kill('SIGTERM');
        setTimeout(() => {
          req.write(content.subarray(half));
          req.end(tail);
        }, 500);
      }, 300);
    });

    const done = await answer;
    expect(done.status).toBe(200);
    expect(JSON.parse(done.body)).toMatchObject({ success: true, file: { original_name: 'slow.txt', size: content.length } });
    expect(await r.exited).toBe(0);
    expect(await healthy(r.ports.api)).toBe(false);
    // SQLite removes its write-ahead log when the last connection closes cleanly.
    expect(fs.existsSync(path.join(r.dataDir, 'stash.db'))).toBe(true);
    expect(fs.existsSync(path.join(r.dataDir, 'stash.db-wal'))).toBe(false);
  });
});
