import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../../server/config.ts';
import { spawnServer } from '../../helpers/server-process.ts';

function problemsOf(env: Record<string, string>): string[] {
  try {
    loadConfig({ DATA_DIR: os.tmpdir(), ...env });
    return [];
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
}

describe('configuration guards (issue 8 items 5, 11–13)', () => {
  it('refuses a captcha secret without its site key, for either provider, and the reverse', () => {
    expect(problemsOf({ HCAPTCHA_SECRET: 's' })).toEqual(['HCAPTCHA_SECRET is set but HCAPTCHA_SITE_KEY is not: set both (or neither, to switch this captcha off)']);
    expect(problemsOf({ TURNSTILE_SECRET: 's' })).toEqual(['TURNSTILE_SECRET is set but TURNSTILE_SITE_KEY is not: set both (or neither, to switch this captcha off)']);
    expect(problemsOf({ TURNSTILE_SITE_KEY: 'k' })).toEqual(['TURNSTILE_SITE_KEY is set but TURNSTILE_SECRET is not: set both (or neither, to switch this captcha off)']);
    expect(problemsOf({ HCAPTCHA_SECRET: 's', HCAPTCHA_SITE_KEY: 'k', TURNSTILE_SECRET: 't', TURNSTILE_SITE_KEY: 'u' })).toEqual([]);
  });

  it('the server process refuses to start with a lone captcha secret and says why', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'stash-cfg-'));
    try {
      const r = spawnServer({ ...process.env, DATA_DIR: dataDir, DATABASE_URL: '', HCAPTCHA_SECRET: 'only-the-secret', HCAPTCHA_SITE_KEY: '', API_PORT: '0', SITE_PORT: '0', FILES_PORT: '0' });
      expect(await r.exited).toBe(1);
      expect(r.output()).toContain('HCAPTCHA_SECRET is set but HCAPTCHA_SITE_KEY is not');
    } finally {
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('reads the privacy and slow-client settings with safe defaults', () => {
    const c = loadConfig({ DATA_DIR: os.tmpdir() });
    expect(c).toMatchObject({ logClientIps: false, serveSourceMaps: false, contactEmail: null, maxConnectionsPerIp: 64, minBodyRate: 1024, filesRateLimit: 1200 });
    // Behind a proxy every socket is the proxy's: the per-address cap is off unless set.
    expect(loadConfig({ DATA_DIR: os.tmpdir(), TRUST_PROXY: 'true' }).maxConnectionsPerIp).toBe(0);
    expect(loadConfig({ DATA_DIR: os.tmpdir(), CONTACT_EMAIL: 'abuse@example.org' }).contactEmail).toBe('abuse@example.org');
    expect(problemsOf({ CONTACT_EMAIL: 'not an address', MIN_BODY_RATE: 'fast', MAX_CONNECTIONS_PER_IP: '-1', SERVE_SOURCE_MAPS: 'maybe' })).toEqual([
      expect.stringContaining('CONTACT_EMAIL'),
      expect.stringContaining('MAX_CONNECTIONS_PER_IP'),
      expect.stringContaining('MIN_BODY_RATE'),
      expect.stringContaining('SERVE_SOURCE_MAPS'),
    ]);
  });

  it('runs the files host as one process unless FILES_PROCESSES asks for more, and refuses a count it cannot run', () => {
    expect(loadConfig({ DATA_DIR: os.tmpdir() }).filesProcesses).toBe(1);
    expect(loadConfig({ DATA_DIR: os.tmpdir(), FILES_PROCESSES: '3' }).filesProcesses).toBe(3);
    expect(loadConfig({ DATA_DIR: os.tmpdir(), FILES_PROCESSES: 'auto' }).filesProcesses).toBe(os.availableParallelism());
    for (const bad of ['0', '-2', '1.5', 'many', '65']) {
      expect(problemsOf({ FILES_PROCESSES: bad }), bad).toEqual([`FILES_PROCESSES must be a whole number from 1 to 64, or auto for one per core (got "${bad}")`]);
    }
  });

  it('hands downloads to the proxy only at a location path it can name, from local disk or S3', () => {
    expect(loadConfig({ DATA_DIR: os.tmpdir() }).filesAccelRedirect).toBeNull();
    expect(loadConfig({ DATA_DIR: os.tmpdir(), FILES_ACCEL_REDIRECT: '/_stash_files/' }).filesAccelRedirect).toBe('/_stash_files/');
    for (const bad of ['_stash_files/', '/_stash_files', '/', '/a b/', '/a//', '/../', '/a/./']) {
      expect(problemsOf({ FILES_ACCEL_REDIRECT: bad }), bad).toEqual([
        `FILES_ACCEL_REDIRECT must be a path that starts and ends with /, of letters, digits, ., _, ~ and - (no . or .. between slashes) (got "${bad}")`,
      ]);
    }
    const s3 = { STORAGE_DRIVER: 's3', S3_BUCKET: 'b', S3_ACCESS_KEY_ID: 'k', S3_SECRET_ACCESS_KEY: 's' };
    expect(problemsOf({ ...s3, FILES_ACCEL_REDIRECT: '/_stash_s3/' })).toEqual([]);
  });
});
