import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort } from '../helpers/free-port.ts';
import { spawnServer, waitForHealth } from '../helpers/server-process.ts';
import { buildIsStale, buildWebApp } from '../../scripts/web-build.mjs';
import { ensureServerBuilt } from '../../scripts/server-build.mjs';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';

const ROOT = path.resolve(import.meta.dirname, '../..');
/** Named in the README: CI keeps this folder as an artifact. */
export const SCREENSHOT_DIR = path.join(ROOT, 'artifacts', 'screenshots');

export const ADMIN = { username: 'e2e-admin', password: 'e2e-admin-password' };

export interface Stack {
  siteUrl: string;
  apiUrl: string;
  filesUrl: string;
  /** The invite key the server printed at its first start. */
  inviteKey: string;
  browser: Browser;
  /** POST a JSON body to the API, the way the web app does (design §5). */
  api<T = Record<string, unknown>>(apiPath: string, body?: Record<string, unknown>): Promise<{ status: number; body: T }>;
  /** A fresh browser context (its own storage) with one page whose console is watched. */
  openPage(options?: { width?: number; height?: number }): Promise<WatchedPage>;
  /** A new invite key, created by the admin through the API. */
  newInvite(): Promise<string>;
  /** Token of a fresh login through the API, for setting up state quickly. */
  login(username: string, password: string): Promise<string>;
  stop(): Promise<void>;
  /** The server's output so far, for failure messages. */
  serverLog(): string;
}

export interface WatchedPage {
  context: BrowserContext;
  page: Page;
  /** Console errors and uncaught exceptions seen on this page so far. */
  errors: string[];
  /** Fails with every console error except those the test expects (e.g. a 401 after a ban). */
  assertNoConsoleErrors(expected?: RegExp[]): void;
  close(): Promise<void>;
}


/**
 * The suite tests the built app the site listener serves. It builds when dist/ is missing or
 * older than the sources, so a stale build never hides a change (E2E_SKIP_BUILD=1 trusts
 * whatever dist/ holds).
 */
export function ensureBuilt(): void {
  if (process.env.E2E_SKIP_BUILD === '1' && fs.existsSync(path.join(ROOT, 'dist', 'index.html'))) return;
  if (!buildIsStale(ROOT)) return;
  if (buildWebApp(ROOT, { quiet: true }) !== 0) throw new Error('the web app did not build');
}

async function waitForInviteKey(log: () => string): Promise<string | null> {
  const deadline = Date.now() + 5_000;
  while (Date.now() < deadline) {
    const m = /invite key: (\S+)/.exec(log());
    if (m && m[1] && m[1] !== '-') return m[1];
    await new Promise((r) => setTimeout(r, 100));
  }
  return null;
}

/**
 * Starts the real server (all three roles, fresh SQLite in a temp folder) and Chromium.
 * `extraEnv` adds deployment settings a file needs (e.g. SENTRY_DSN pointing at a stand-in).
 */
export async function startStack(extraEnv: Record<string, string> = {}): Promise<Stack> {
  ensureBuilt();
  fs.mkdirSync(SCREENSHOT_DIR, { recursive: true });
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'stash-e2e-'));
  const [sitePort, apiPort, filesPort] = [await freePort(), await freePort(), await freePort()];
  const siteUrl = `http://127.0.0.1:${sitePort}`;
  const apiUrl = `http://127.0.0.1:${apiPort}`;
  const filesUrl = `http://127.0.0.1:${filesPort}`;

  const env: NodeJS.ProcessEnv = { ...process.env };
  // Captcha is off when no secret is set (design §4): the suite cannot solve a real one.
  for (const name of ['HCAPTCHA_SECRET', 'TURNSTILE_SECRET', 'SENTRY_DSN', 'DATABASE_URL', 'STASH_ROLES', 'STORAGE_DRIVER']) delete env[name];
  Object.assign(env, {
    DATA_DIR: dataDir,
    HOST: '127.0.0.1',
    SITE_PORT: String(sitePort),
    API_PORT: String(apiPort),
    FILES_PORT: String(filesPort),
    SITE_URL: siteUrl,
    API_URL: apiUrl,
    FILES_URL: filesUrl,
    ADMIN_USERNAME: ADMIN.username,
    ADMIN_PASSWORD: ADMIN.password,
    RATE_LIMITS: 'off',
    LOG_LEVEL: 'warn',
    NODE_ENV: 'production',
  });
  if (process.env.E2E_DATABASE_URL) env.DATABASE_URL = process.env.E2E_DATABASE_URL;
  Object.assign(env, extraEnv);

  // The browser talks to the server as production runs it: compiled and bundled (`npm start`,
  // scripts/server-build.mjs), rebuilt first when older than its sources, as `npm start` does.
  const server = spawnServer(env, { compiled: await ensureServerBuilt(ROOT) });
  const log = server.output;

  let browser: Browser | null = null;
  const stop = async () => {
    await browser?.close().catch(() => {});
    await server.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  };

  try {
    await waitForHealth(server, [siteUrl, apiUrl, filesUrl]);
    browser = await chromium.launch({
      executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
      args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    });
  } catch (err) {
    await stop();
    throw err;
  }
  const theBrowser = browser;

  const api: Stack['api'] = async (apiPath, body = {}) => {
    const res = await fetch(apiUrl + apiPath, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    return { status: res.status, body: (await res.json()) as never };
  };
  const login = async (username: string, password: string) => {
    const res = await api<{ token?: string }>('/api/v1/auth/login', { username, password });
    if (!res.body.token) throw new Error(`login of ${username} failed: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body.token;
  };
  let adminToken: string | null = null;
  const newInvite = async () => {
    adminToken ??= await login(ADMIN.username, ADMIN.password);
    const res = await api<{ inviteKeys?: string[] }>('/api/v1/admin/create/invites', { token: adminToken, count: 1 });
    const key = res.body.inviteKeys?.[0];
    if (!key) throw new Error(`creating an invite failed: ${res.status} ${JSON.stringify(res.body)}`);
    return key;
  };
  const inviteKey = (await waitForInviteKey(log)) ?? (await newInvite());

  const openPage: Stack['openPage'] = async ({ width = 1280, height = 800 } = {}) => {
    const context = await theBrowser.newContext({ viewport: { width, height }, acceptDownloads: true });
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: siteUrl });
    const page = await context.newPage();
    const errors: string[] = [];
    page.on('console', (msg) => {
      if (msg.type() === 'error') errors.push(`console: ${msg.text()} (${msg.location().url})`);
    });
    page.on('pageerror', (err) => errors.push(`uncaught: ${err.message}`));
    return {
      context,
      page,
      errors,
      assertNoConsoleErrors(expected = []) {
        const unexpected = errors.filter((e) => !expected.some((re) => re.test(e)));
        if (unexpected.length > 0) throw new Error(`console errors on ${page.url()}:\n${unexpected.join('\n')}`);
      },
      close: () => context.close(),
    };
  };

  return { siteUrl, apiUrl, filesUrl, inviteKey, browser: theBrowser, api, openPage, newInvite, login, stop, serverLog: log };
}

/** A name for a file inside artifacts/screenshots/. */
export function screenshotPath(name: string): string {
  return path.join(SCREENSHOT_DIR, `${name.replace(/[^a-z0-9]+/gi, '-').replace(/^-|-$/g, '')}.png`);
}
