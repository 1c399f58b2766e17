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

  it('takes a Sentry DSN only in the shape the browser SDK accepts', () => {
    const dsn = 'https://abc123def@o12345.ingest.sentry.io/4504';
    expect(loadConfig({ SENTRY_DSN: dsn }).sentryDsn).toBe(dsn);
    expect(loadConfig({ SENTRY_DSN: 'http://publickey@127.0.0.1:9000/1' }).sentryDsn).toBe('http://publickey@127.0.0.1:9000/1');
    for (const bad of ['https://o12345.ingest.sentry.io/4504', 'https://public-key@sentry.example/1', 'https://abc@sentry.example/']) {
      expect(() => loadConfig({ SENTRY_DSN: bad }), bad).toThrow(/SENTRY_DSN must look like https:\/\/<public key>@<host>\/<project id>/);
    }
  });
});

describe('DONATION_WALLETS (spec §1: the FAQ lists the donation wallets)', () => {
  function problemsFor(env: Record<string, string>): string[] {
    try {
      loadConfig(env);
    } catch (err) {
      expect(err).toBeInstanceOf(ConfigError);
      return (err as ConfigError).problems;
    }
    throw new Error('expected a ConfigError');
  }

  it('reads "Label=address" entries in order, trimming spaces and skipping empty entries', () => {
    const config = loadConfig({
      DONATION_WALLETS: ' Bitcoin (BTC) = bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq ;Monero (XMR)=44AFFq5kSiGBoZ4NMDwYtN18obc8AemS33DBLWs3H7otXft3XjrpDtQGv7SqSsaBYBb98uNbr2VBBEt7f2wfn3RVGQBEP3A;;Pay link=bitcoin:bc1qxy?amount=0.01&label=Stash;',
    });
    expect(config.donationWallets).toEqual([
      { label: 'Bitcoin (BTC)', address: 'bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq' },
      { label: 'Monero (XMR)', address: '44AFFq5kSiGBoZ4NMDwYtN18obc8AemS33DBLWs3H7otXft3XjrpDtQGv7SqSsaBYBb98uNbr2VBBEt7f2wfn3RVGQBEP3A' },
      { label: 'Pay link', address: 'bitcoin:bc1qxy?amount=0.01&label=Stash' },
    ]);
    expect(Object.isFrozen(config.donationWallets)).toBe(true);
  });

  it('has no wallets when unset or blank', () => {
    expect(loadConfig({}).donationWallets).toEqual([]);
    expect(loadConfig({ DONATION_WALLETS: '  ' }).donationWallets).toEqual([]);
    expect(loadConfig({ DONATION_WALLETS: ' ; ' }).donationWallets).toEqual([]);
  });

  it.each([
    ['an entry without "="', 'Bitcoin bc1qxyz', /entry 1 .*no "="/],
    ['an empty label', '=bc1qxyz', /entry 1 .*empty label/],
    ['a label over 40 characters', `${'L'.repeat(41)}=bc1qxyz`, /entry 1 .*label longer than 40/],
    ['a label with a control character', 'Bit\u0007coin=bc1qxyz', /entry 1 .*control/],
    ['an empty address', 'Bitcoin=', /entry 1 .*empty address/],
    ['an address over 200 characters', `Bitcoin=${'a'.repeat(201)}`, /entry 1 .*address longer than 200/],
    ['an address with a space', 'Bitcoin=bc1q xyz', /entry 1 .*address with characters other than/],
    ['an address with markup', 'Bitcoin=bc1q<script>', /entry 1 .*address with characters other than/],
    ['an address with a quote', `Bitcoin=bc1q"x'y`, /entry 1 .*address with characters other than/],
    ['more than 10 entries', Array.from({ length: 11 }, (_, i) => `Coin ${i}=addr${i}`).join(';'), /11 entries, at most 10/],
  ])('refuses %s, naming DONATION_WALLETS and the expected format', (_what, value, detail) => {
    const problems = problemsFor({ DONATION_WALLETS: value });
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(/^DONATION_WALLETS /);
    expect(problems[0]).toMatch(detail);
    expect(problems[0]).toContain('"Label=address" separated by ";"');
  });

  it('accepts exactly 10 entries and a 40-character label and 200-character address', () => {
    expect(loadConfig({ DONATION_WALLETS: Array.from({ length: 10 }, (_, i) => `Coin ${i}=addr${i}`).join(';') }).donationWallets).toHaveLength(10);
    expect(loadConfig({ DONATION_WALLETS: `${'L'.repeat(40)}=${'a'.repeat(200)}` }).donationWallets).toHaveLength(1);
  });

  it('names every bad entry in one line, next to the other bad variables', () => {
    const problems = problemsFor({ DONATION_WALLETS: 'Bitcoin=bc1qok;Monero;=x', API_PORT: 'eighty' });
    expect(problems).toHaveLength(2);
    const wallets = problems.find((p) => p.startsWith('DONATION_WALLETS'))!;
    expect(wallets).toMatch(/entry 2 \("Monero"\) has no "="/);
    expect(wallets).toMatch(/entry 3 .*empty label/);
    expect(wallets).not.toMatch(/entry 1/);
    expect(problems.some((p) => p.startsWith('API_PORT'))).toBe(true);
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
