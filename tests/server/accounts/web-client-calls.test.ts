import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { authLogin, authRegister } from '../../../contract/auth.ts';
import { call } from '../../../src/lib/api-client.ts';
import { setRuntimeConfig } from '../../../src/lib/runtime-config.ts';
import { createTestApp, DIALECTS, type TestApp } from '../../helpers/test-app.ts';

/**
 * Issue 8 item 10: the web app's own client against the real API over HTTP. A visitor who still
 * holds a token (signed in on /register, or whose session check failed offline) must be able to
 * sign in and register: those calls take no `token`, and the server refuses unknown fields.
 */
class MemoryStorage {
  private items = new Map<string, string>();
  getItem(k: string) {
    return this.items.get(k) ?? null;
  }
  setItem(k: string, v: string) {
    this.items.set(k, v);
  }
  removeItem(k: string) {
    this.items.delete(k);
  }
}

describe.each(DIALECTS)("the web client's calls on %s", (dialect) => {
  let t: TestApp;
  beforeEach(() => {
    (globalThis as { localStorage?: unknown }).localStorage = new MemoryStorage();
  });
  afterEach(async () => {
    delete (globalThis as { localStorage?: unknown }).localStorage;
    await t?.close();
  });

  it('signs in and registers while an old token is still stored', async () => {
    t = await createTestApp(dialect);
    await t.api.listen({ port: 0, host: '127.0.0.1' });
    setRuntimeConfig({ apiUrl: `http://127.0.0.1:${(t.api.server.address() as AddressInfo).port}` });
    const user = await t.createUser();
    localStorage.setItem('token', 'an-old-token-from-a-previous-session');

    const login = await call<typeof authLogin>('/api/v1/auth/login', { username: user.username, password: user.password });
    expect(login.success).toBe(true);
    expect(typeof login.token).toBe('string');

    localStorage.setItem('token', login.token);
    const reg = await call<typeof authRegister>('/api/v1/auth/register', { username: 'new_person', password: 'password-9', invitekey: t.inviteKey });
    expect(reg).toEqual({ success: true, message: 'Account has been created!' });
  });
});
