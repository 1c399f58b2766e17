import { afterEach, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../server/config.ts';
import { DIALECTS, createTestApp, type TestApp } from '../helpers/test-app.ts';

describe('configuration (design §4)', () => {
  it('lists every bad variable at once', () => {
    let error: unknown;
    try {
      loadConfig({ API_PORT: 'eighty', STORAGE_DRIVER: 'floppy', SITE_URL: 'ftp://x', RATE_LIMITS: 'maybe' });
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const problems = (error as ConfigError).problems.join('\n');
    expect(problems).toContain('API_PORT');
    expect(problems).toContain('STORAGE_DRIVER');
    expect(problems).toContain('SITE_URL');
    expect(problems).toContain('RATE_LIMITS');
  });

  it('defaults to SQLite under DATA_DIR and the three ports of design §2', () => {
    const config = loadConfig({ DATA_DIR: '/tmp/stash-x' });
    expect(config.databaseUrl).toBe('sqlite:///tmp/stash-x/stash.db');
    expect(config.ports).toEqual({ site: 8080, api: 8081, files: 8082 });
    expect(config.roles).toEqual(['site', 'api', 'files']);
    expect(Object.isFrozen(config.urls)).toBe(true);
  });

  it('requires the S3 credentials when the S3 driver is chosen', () => {
    expect(() => loadConfig({ STORAGE_DRIVER: 's3' })).toThrow(/S3_BUCKET[\s\S]*S3_ACCESS_KEY_ID[\s\S]*S3_SECRET_ACCESS_KEY/);
  });
});

describe.each(DIALECTS)('foundation on %s', (dialect) => {
  let t: TestApp;
  afterEach(async () => t?.close());

  it('answers /healthz when the database is reachable', async () => {
    t = await createTestApp(dialect);
    const res = await t.api.inject({ method: 'GET', url: '/healthz' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ ok: true });
  });

  it('bootstraps roles, settings, MIME list, one admin and one invite', async () => {
    t = await createTestApp(dialect);
    const roles = await t.deps.db.selectFrom('roles').select('name').orderBy('name').execute();
    expect(roles.map((r) => r.name)).toEqual(['admin', 'default', 'mod', 'trusted']);
    expect(await t.deps.settings.get()).toEqual({ allow_uploading: true, maintenance_mode: false, max_file_size: 1024 });
    expect((await t.deps.settings.mimeTypes()).length).toBeGreaterThan(0);
    expect(t.inviteKey).not.toBe('');
  });

  it('answers unknown API paths with a JSON 404', async () => {
    t = await createTestApp(dialect);
    const res = await t.call('/api/v1/nope', {});
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ success: false, error: 'Not found.' });
  });
});
