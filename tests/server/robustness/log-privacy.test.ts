import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { freePort } from '../../helpers/free-port.ts';
import { spawnServer, waitForHealth, type ServerProcess } from '../../helpers/server-process.ts';

/**
 * Issue 8 item 12, design §11: the privacy page says client IP addresses are not logged, so the
 * request log lines of the real process must not hold one unless the operator opts in.
 */
const started: { server: ServerProcess; dataDir: string }[] = [];
afterEach(async () => {
  for (const { server, dataDir } of started.splice(0)) {
    await server.stop(5000);
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
});

async function requestLines(env: Record<string, string>): Promise<string[]> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'stash-logs-'));
  const api = await freePort();
  const server = spawnServer({ ...process.env, DATA_DIR: dataDir, DATABASE_URL: '', HOST: '127.0.0.1', STASH_ROLES: 'api', API_PORT: String(api), LOG_LEVEL: 'info', ...env });
  started.push({ server, dataDir });
  await waitForHealth(server, [`http://127.0.0.1:${api}`], 30_000);
  await fetch(`http://127.0.0.1:${api}/api/v1/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: 'nobody', password: 'wrong-password' }) });
  await expect.poll(() => server.output().includes('/api/v1/auth/login') && server.output().includes('request completed'), { timeout: 10_000 }).toBe(true);
  return server
    .output()
    .split('\n')
    .filter((line) => line.includes('"reqId"'));
}

describe('client addresses in the server log', () => {
  it('are left out by default', async () => {
    const lines = await requestLines({});
    expect(lines.some((l) => l.includes('/api/v1/auth/login'))).toBe(true);
    for (const line of lines) {
      // The Host header names this server (127.0.0.1:port here), not the client: set aside.
      const entry = JSON.parse(line) as { req?: { host?: string } };
      delete entry.req?.host;
      expect(JSON.stringify(entry)).not.toContain('127.0.0.1');
      expect(line).not.toContain('remoteAddress');
    }
  });

  it('are written with LOG_CLIENT_IPS=true', async () => {
    const lines = await requestLines({ LOG_CLIENT_IPS: 'true' });
    expect(lines.some((l) => l.includes('"remoteAddress":"127.0.0.1"'))).toBe(true);
  });
});
