import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { DIALECTS, createTestApp, type TestApp } from '../../helpers/test-app.ts';
import { startCaptchaProvider } from './fixtures.ts';

describe.each(DIALECTS)('captcha (design §4) on %s', (dialect) => {
  let t: TestApp;
  let provider: Awaited<ReturnType<typeof startCaptchaProvider>>;
  beforeAll(async () => {
    provider = await startCaptchaProvider('test-secret');
  });
  afterAll(async () => provider.close());
  afterEach(async () => t?.close());

  const withHcaptcha = () => createTestApp(dialect, { HCAPTCHA_SECRET: 'test-secret', HCAPTCHA_SITE_KEY: 'test-site-key', HCAPTCHA_VERIFY_URL: provider.url });

  it('refuses a login without a captcha or with a bad one, and accepts a good one', async () => {
    t = await withHcaptcha();
    const u = await t.createUser();
    const creds = { username: u.username, password: u.password };
    const missing = await t.call('/api/v1/auth/login', creds);
    expect(missing.status).toBe(400);
    expect(missing.body).toEqual({ success: false, error: { error: 'You must verify the captcha' } });
    const bad = await t.call('/api/v1/auth/login', { ...creds, captcha: 'bad', captchaType: 'hcaptcha' });
    expect(bad.status).toBe(400);
    expect(bad.body).toEqual({ success: false, error: { error: 'Captcha verification failed. Please try again.' } });
    const good = await t.call<{ success: boolean; token: string }>('/api/v1/auth/login', { ...creds, captcha: 'good' });
    expect(good.status).toBe(200);
    expect(good.body.success).toBe(true);
    // The provider was asked with the site's secret and the client's answer.
    const last = provider.requests.at(-1)!;
    expect(last.get('secret')).toBe('test-secret');
    expect(last.get('response')).toBe('good');
  });

  it('refuses a provider that is not switched on', async () => {
    t = await withHcaptcha();
    const u = await t.createUser();
    const res = await t.call('/api/v1/auth/login', { username: u.username, password: u.password, captcha: 'good', captchaType: 'turnstile' });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ success: false, error: { error: "The captcha provider 'turnstile' is not enabled on this site." } });
  });

  it('guards registration with its own message, and creates the account with a good answer', async () => {
    t = await withHcaptcha();
    const form = { username: 'captchaed', password: 'password-1', invitekey: t.inviteKey };
    const missing = await t.call('/api/v1/auth/register', form);
    expect(missing.status).toBe(400);
    expect(missing.body).toEqual({ success: false, error: 'Please verify the captcha.' });
    const bad = await t.call('/api/v1/auth/register', { ...form, captcha: 'bad' });
    expect(bad.status).toBe(400);
    expect(await t.deps.db.selectFrom('users').select('id').where('username', '=', 'captchaed').execute()).toEqual([]);
    expect((await t.call('/api/v1/auth/register', { ...form, captcha: 'good' })).status).toBe(200);
  });

  it('asks for no captcha when no secret is set', async () => {
    t = await createTestApp(dialect);
    const u = await t.createUser();
    expect((await t.call('/api/v1/auth/login', { username: u.username, password: u.password })).status).toBe(200);
  });
});

describe.each(DIALECTS)('rate limits (design §6) on %s', (dialect) => {
  let t: TestApp;
  afterEach(async () => t?.close());

  it('answers the 11th login in a minute with 429 and Retry-After', async () => {
    t = await createTestApp(dialect, { RATE_LIMITS: 'on' });
    for (let i = 0; i < 10; i++) {
      expect((await t.call('/api/v1/auth/login', { username: 'nobody', password: 'wrong-password' })).status).toBe(401);
    }
    const res = await t.call('/api/v1/auth/login', { username: 'nobody', password: 'wrong-password' });
    expect(res.status).toBe(429);
    expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
    expect(res.body).toMatchObject({ success: false, error: expect.stringMatching(/Too many requests/) });
  });

  it('answers the 6th registration in a minute with 429', async () => {
    t = await createTestApp(dialect, { RATE_LIMITS: 'on' });
    for (let i = 0; i < 5; i++) {
      expect((await t.call('/api/v1/auth/register', { username: `r${i}xx`, password: 'password-1', invitekey: 'nope' })).status).toBe(400);
    }
    const res = await t.call('/api/v1/auth/register', { username: 'r9xx', password: 'password-1', invitekey: 'nope' });
    expect(res.status).toBe(429);
    expect(res.headers['retry-after']).toBeDefined();
  });

  it('answers the 11th invite generation in a minute with 429', async () => {
    t = await createTestApp(dialect, { RATE_LIMITS: 'on' });
    for (let i = 0; i < 10; i++) {
      expect((await t.call('/api/v1/utils/invites', {}, { token: t.admin.token })).status).toBe(200);
    }
    const res = await t.call('/api/v1/utils/invites', {}, { token: t.admin.token });
    expect(res.status).toBe(429);
    expect(res.headers['retry-after']).toBeDefined();
  });
});
