import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { startStack, type Stack } from './harness.ts';
import { USER_PASSWORD, uniqueName } from './fixtures.ts';
import { registerViaApi } from './flows.ts';

/**
 * Issue 5 in real Chromium: installable, offline, share target, and a 170 MB upload that
 * survives going offline mid-chunk and a reload mid-upload.
 */

const MiB = 1024 * 1024;

/** One upload request as the proxy forwarded it to the API. */
interface ForwardedUpload {
  fields: Record<string, string>;
  /** Bytes of the file part that reached the server. */
  fileBytes: number;
  cut: boolean;
}

/**
 * An HTTP forward proxy for one browser context (site, API, files host, service worker and
 * upload worker all go through it). It counts the chunk bytes every upload request delivers to
 * the server, can throttle them (so a test can act mid-chunk), cut one, and refuse everything.
 */
class CountingProxy {
  readonly uploads: ForwardedUpload[] = [];
  /** What files/upload/status told the client the server holds of an unfinished chunk. */
  readonly storedPartials: { chunkIndex: number; bytes: number }[] = [];
  /** Bytes per second for upload bodies. */
  uploadRate = Infinity;
  down = false;
  /** Connections to this host:port are refused (the API unreachable while the site is not). */
  blockedHost: string | null = null;
  /** Called as upload bytes pass; return 'cut' to drop this request there. */
  onUploadBytes: (upload: ForwardedUpload) => 'cut' | void = () => undefined;
  private settling = new Set<Promise<void>>();
  /** Upload requests still arriving. */
  private open = new Set<Promise<void>>();
  private server = http.createServer((req, res) => this.handle(req, res));

  async listen(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  totalFileBytes(): number {
    return this.uploads.reduce((sum, u) => sum + u.fileBytes, 0);
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    if (this.down) {
      req.socket.destroy();
      return;
    }
    const target = new URL(req.url ?? '/');
    if (this.blockedHost === target.host) {
      req.socket.destroy();
      return;
    }
    // A status request waits until every upload request still open is over and settled on the
    // server. This proxy reads throttled bodies slowly, so the bytes a closing page had already
    // handed to the network, and the close itself, reach it late; without this wait the test
    // would ask the server about a chunk that is still arriving. (A real server sees them at
    // once.) The status body is small and is forwarded as read.
    let statusBody: Buffer | null = null;
    if (target.pathname === '/api/v1/files/upload/status' && req.method === 'POST') {
      const parts: Buffer[] = [];
      for await (const part of req) parts.push(part as Buffer);
      statusBody = Buffer.concat(parts);
      await Promise.all([...this.open, ...this.settling]);
    }
    const upstream = http.request({ host: target.hostname, port: target.port, method: req.method, path: target.pathname + target.search, headers: req.headers, agent: false });
    upstream.on('error', () => req.socket.destroy());
    upstream.on('response', (up) => {
      if (res.headersSent || req.socket.destroyed) {
        up.resume();
        return;
      }
      if (statusBody) this.recordStatus(up);
      res.writeHead(up.statusCode ?? 502, up.headers);
      up.pipe(res);
    });
    if (statusBody) {
      upstream.end(statusBody);
      return;
    }
    if (target.pathname !== '/api/v1/files/upload' || req.method !== 'POST') {
      req.pipe(upstream);
      return;
    }
    this.forwardUpload(req, upstream);
  }

  private recordStatus(answer: http.IncomingMessage): void {
    const parts: Buffer[] = [];
    answer.on('data', (part: Buffer) => parts.push(part));
    answer.on('end', () => {
      try {
        const body = JSON.parse(Buffer.concat(parts).toString()) as { partial?: { chunkIndex: number; bytes: number } | null };
        if (body.partial) this.storedPartials.push(body.partial);
      } catch {
        // Not a status answer (a 5xx page from a server going down): nothing stored to record.
      }
    });
  }

  private forwardUpload(req: http.IncomingMessage, upstream: http.ClientRequest): void {
    const boundary = /boundary=(?:"([^"]+)"|([^;]+))/.exec(req.headers['content-type'] ?? '');
    const trailer = Buffer.byteLength(`\r\n--${boundary?.[1] ?? boundary?.[2] ?? ''}--\r\n`);
    const upload: ForwardedUpload = { fields: {}, fileBytes: 0, cut: false };
    this.uploads.push(upload);
    let head = Buffer.alloc(0);
    let fileStart = -1;
    let forwarded = 0;
    let finished = false;
    const started = Date.now();

    let settle: () => void = () => undefined;
    const settled = new Promise<void>((resolve) => (settle = resolve));
    let over: () => void = () => undefined;
    const arriving = new Promise<void>((resolve) => (over = resolve));
    this.open.add(arriving);
    const closed = () => {
      this.open.delete(arriving);
      over();
    };
    upstream.once('response', closed);
    upstream.once('close', closed);
    const stop = () => {
      if (finished) return;
      finished = true;
      upload.cut = true;
      this.settling.add(settled);
      // The server gets every forwarded byte, then the end of the body, and records what it kept.
      setTimeout(() => upstream.socket?.end(), 300);
      const done = () => {
        // Let the server write down the partial chunk before anyone asks for the status.
        setTimeout(() => {
          this.settling.delete(settled);
          settle();
          req.socket.destroy();
        }, 500);
      };
      upstream.once('response', done);
      upstream.once('close', done);
    };
    req.on('close', () => {
      if (!req.complete) stop();
    });
    req.on('data', (data: Buffer) => {
      if (finished) return;
      upstream.write(data);
      forwarded += data.length;
      if (fileStart < 0) {
        head = Buffer.concat([head, data]);
        const text = head.toString('latin1');
        const header = /Content-Disposition: form-data; name="file"[^\r]*\r\n(?:[^\r]+\r\n)*\r\n/i.exec(text);
        if (header) {
          fileStart = header.index + header[0].length;
          for (const m of text.slice(0, header.index).matchAll(/name="([^"]+)"\r\n\r\n([^\r]*)\r\n/g)) upload.fields[m[1]!] = m[2]!;
        }
      }
      if (fileStart >= 0) upload.fileBytes = forwarded - fileStart;
      if (this.onUploadBytes(upload) === 'cut') {
        stop();
        return;
      }
      if (Number.isFinite(this.uploadRate)) {
        const due = started + (forwarded / this.uploadRate) * 1000;
        const wait = due - Date.now();
        if (wait > 5) {
          req.pause();
          setTimeout(() => req.resume(), wait);
        }
      }
    });
    const declared = Number(req.headers['content-length'] ?? NaN);
    req.on('end', () => {
      // A body that ended short (the page went away) is a cut, not a finished request.
      if (Number.isFinite(declared) && forwarded < declared) stop();
      if (finished) return;
      finished = true;
      upload.fileBytes = Math.max(0, forwarded - fileStart - trailer);
      upstream.end();
    });
  }
}

let stack: Stack;
let username: string;
let token: string;
const tmpDir = fs.mkdtempSync(path.join(os.tmpdir(), 'stash-pwa-'));

beforeAll(async () => {
  stack = await startStack();
  username = uniqueName('pwa');
  await registerViaApi(stack, username, USER_PASSWORD);
  token = await stack.login(username, USER_PASSWORD);
});
afterAll(async () => {
  await stack?.stop();
  fs.rmSync(tmpDir, { recursive: true, force: true });
});

async function openSignedIn(proxy?: CountingProxy, proxyUrl?: string): Promise<{ context: BrowserContext; page: Page }> {
  const context = await stack.browser.newContext({
    viewport: { width: 1280, height: 800 },
    // '<-loopback>' sends even 127.0.0.1 through the proxy (Chromium bypasses loopback by default).
    ...(proxy && proxyUrl ? { proxy: { server: proxyUrl, bypass: '<-loopback>' } } : {}),
  });
  await context.addInitScript((t) => localStorage.setItem('token', t), token);
  const page = await context.newPage();
  return { context, page };
}

/** The service worker controls the page (it claims clients on first install). */
async function waitForServiceWorker(page: Page): Promise<void> {
  await page.waitForFunction(() => navigator.serviceWorker?.controller !== null, undefined, { timeout: 30_000 });
}

async function listFiles(): Promise<{ original_name: string; url: string; size: number }[]> {
  const res = await stack.api<{ files?: { original_name: string; url: string; size: number }[] }>('/api/v1/files/uploaded', { token, page: 1, pageSize: 100 });
  return res.body.files ?? [];
}

async function waitForFile(name: string, timeoutMs: number): Promise<{ url: string; size: number }> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const file = (await listFiles()).find((f) => f.original_name === name);
    if (file) return file;
    if (Date.now() > deadline) throw new Error(`${name} was never listed`);
    await new Promise((r) => setTimeout(r, 500));
  }
}

async function sha256OfUrl(url: string): Promise<string> {
  const res = await fetch(url);
  expect(res.status).toBe(200);
  return crypto.createHash('sha256').update(Buffer.from(await res.arrayBuffer())).digest('hex');
}

/** What the OS share sheet does: a multipart POST navigation to the manifest's share_target action. */
async function submitShare(page: Page, filePath: string): Promise<void> {
  await page.evaluate(() => {
    const f = document.createElement('form');
    f.method = 'POST';
    f.action = '/share-target';
    f.enctype = 'multipart/form-data';
    f.id = 'share-form';
    const input = document.createElement('input');
    input.type = 'file';
    input.name = 'file';
    f.append(input);
    document.body.append(f);
  });
  await page.locator('#share-form input').setInputFiles(filePath);
  await Promise.all([page.waitForURL('**/dashboard?shared=1'), page.evaluate(() => (document.getElementById('share-form') as HTMLFormElement).submit())]);
}

describe('the installable app', () => {
  it('passes Chromium’s installability check', async () => {
    // A persistent profile: Chromium refuses to install from an incognito-like context, which
    // is what browser.newContext() makes.
    const profile = fs.mkdtempSync(path.join(tmpDir, 'profile-'));
    const context = await chromium.launchPersistentContext(profile, {
      executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
      args: ['--no-sandbox', '--disable-gpu', '--no-first-run'],
    });
    try {
      await context.addInitScript((t) => localStorage.setItem('token', t), token);
      const page = context.pages()[0] ?? (await context.newPage());
      await page.goto(`${stack.siteUrl}/`);
      await waitForServiceWorker(page);
      const cdp = await context.newCDPSession(page);
      let errors: unknown[] = ['not checked'];
      for (let i = 0; i < 20 && errors.length > 0; i++) {
        ({ installabilityErrors: errors } = (await cdp.send('Page.getInstallabilityErrors')) as { installabilityErrors: unknown[] });
        if (errors.length > 0) await page.waitForTimeout(500);
      }
      expect(errors).toEqual([]);
      const manifest = (await (await fetch(`${stack.siteUrl}/manifest.webmanifest`)).json()) as Record<string, unknown>;
      expect(manifest).toMatchObject({ display: 'standalone', start_url: '/dashboard', share_target: { action: '/share-target', method: 'POST', enctype: 'multipart/form-data' } });
    } finally {
      await context.close();
    }
  });

  it('reloads its pages with no network, signed-in ones with their last known data', async () => {
    const proxy = new CountingProxy();
    const proxyUrl = await proxy.listen();
    const { context, page } = await openSignedIn(proxy, proxyUrl);
    try {
      const name = `offline-${Date.now()}.txt`;
      const form = new FormData();
      form.append('token', token);
      form.append('file', new Blob(['kept for offline reading\n'], { type: 'text/plain' }), name);
      expect((await fetch(`${stack.apiUrl}/api/v1/files/upload`, { method: 'POST', body: form })).status).toBe(200);

      await page.goto(`${stack.siteUrl}/dashboard`);
      await waitForServiceWorker(page);
      // Visit while online so the service worker has seen each page's data once.
      for (const route of ['/', '/faq', '/privacy', '/uploaded']) {
        await page.goto(`${stack.siteUrl}${route}`, { waitUntil: 'networkidle' });
      }
      await page.getByText(name).first().waitFor({ timeout: 15_000 });

      await context.setOffline(true);
      proxy.down = true; // nothing reaches any server, the service worker's fetches included
      for (const route of ['/', '/faq', '/privacy', '/dashboard']) {
        await page.goto(`${stack.siteUrl}${route}`);
        await page.locator('h1').first().waitFor({ timeout: 15_000 });
      }
      await page.goto(`${stack.siteUrl}/uploaded`);
      await page.getByText(name).first().waitFor({ timeout: 15_000 });
    } finally {
      await context.close();
      await proxy.close();
    }
  });

  it('takes a file shared to it and uploads it', async () => {
    const { context, page } = await openSignedIn();
    try {
      await page.goto(`${stack.siteUrl}/dashboard`);
      await waitForServiceWorker(page);
      const name = `shared-${Date.now()}.txt`;
      const bytes = Buffer.from(`shared from another app ${crypto.randomUUID()}\n`.repeat(2000));
      const filePath = path.join(tmpDir, name);
      fs.writeFileSync(filePath, bytes);
      await submitShare(page, filePath);
      const listed = await waitForFile(name, 60_000);
      expect(listed.size).toBe(bytes.length);
      expect(await sha256OfUrl(listed.url)).toBe(crypto.createHash('sha256').update(bytes).digest('hex'));
    } finally {
      await context.close();
    }
  });

  it('keeps a file shared while the server is unreachable through closing the app, and uploads it when reopened', async () => {
    const proxy = new CountingProxy();
    const proxyUrl = await proxy.listen();
    const profile = fs.mkdtempSync(path.join(tmpDir, 'profile-'));
    const launch = () =>
      chromium.launchPersistentContext(profile, {
        executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
        args: ['--no-sandbox', '--disable-gpu', '--no-first-run'],
        proxy: { server: proxyUrl, bypass: '<-loopback>' },
      });
    const name = `shared-offline-${Date.now()}.txt`;
    const bytes = Buffer.from(`shared while the API was away ${crypto.randomUUID()}\n`.repeat(5000));
    const filePath = path.join(tmpDir, name);
    fs.writeFileSync(filePath, bytes);
    try {
      const first = await launch();
      const page = first.pages()[0] ?? (await first.newPage());
      await page.goto(`${stack.siteUrl}/login`);
      await page.evaluate((t) => localStorage.setItem('token', t), token);
      await page.goto(`${stack.siteUrl}/dashboard`);
      await waitForServiceWorker(page);
      proxy.blockedHost = new URL(stack.apiUrl).host;
      await submitShare(page, filePath);
      await page.getByText(name).first().waitFor({ timeout: 15_000 });
      await page.waitForTimeout(1000);
      expect((await listFiles()).some((f) => f.original_name === name)).toBe(false);
      await first.close(); // the app is closed with the upload still queued

      proxy.blockedHost = null;
      const second = await launch();
      const again = second.pages()[0] ?? (await second.newPage());
      await again.goto(`${stack.siteUrl}/dashboard`);
      const listed = await waitForFile(name, 60_000);
      expect(await sha256OfUrl(listed.url)).toBe(crypto.createHash('sha256').update(bytes).digest('hex'));
      await second.close();
    } finally {
      await proxy.close();
    }
  });

  it('uploads a queued file from Background Sync with no page of the app open, and says so in a notification', async () => {
    const proxy = new CountingProxy();
    const proxyUrl = await proxy.listen();
    const { context, page } = await openSignedIn(proxy, proxyUrl);
    await context.grantPermissions(['notifications'], { origin: stack.siteUrl });
    const name = `synced-${Date.now()}.txt`;
    const bytes = Buffer.from(`sent by the service worker ${crypto.randomUUID()}\n`.repeat(3000));
    const filePath = path.join(tmpDir, name);
    fs.writeFileSync(filePath, bytes);
    try {
      await page.goto(`${stack.siteUrl}/dashboard`);
      await waitForServiceWorker(page);
      proxy.blockedHost = new URL(stack.apiUrl).host;
      await submitShare(page, filePath);
      await page.getByText(name).first().waitFor({ timeout: 15_000 });
      // No window of the app is left: only the service worker can send it now.
      const blank = await context.newPage();
      await page.close();
      proxy.blockedHost = null;
      await new Promise((r) => setTimeout(r, 1000));
      expect((await listFiles()).some((f) => f.original_name === name)).toBe(false);

      const cdp = await context.newCDPSession(blank);
      const registrations = new Promise<string>((resolve) => {
        cdp.on('ServiceWorker.workerRegistrationUpdated', (event: { registrations: { registrationId: string; scopeURL: string; isDeleted: boolean }[] }) => {
          const ours = event.registrations.find((r) => r.scopeURL.startsWith(stack.siteUrl) && !r.isDeleted);
          if (ours) resolve(ours.registrationId);
        });
      });
      await cdp.send('ServiceWorker.enable');
      const registrationId = await registrations;
      await cdp.send('ServiceWorker.dispatchSyncEvent', { origin: stack.siteUrl, registrationId, tag: 'stash-upload-queue', lastChance: false });
      const listed = await waitForFile(name, 60_000);
      expect(await sha256OfUrl(listed.url)).toBe(crypto.createHash('sha256').update(bytes).digest('hex'));

      // No page was open to tell the user, so the service worker did.
      const app = await context.newPage();
      await app.goto(`${stack.siteUrl}/privacy`);
      const notifications = () =>
        app.evaluate(async () => {
          const registration = await navigator.serviceWorker.getRegistration();
          return ((await registration?.getNotifications()) ?? []).map((n) => [n.title, n.body]);
        });
      await expect.poll(notifications, { timeout: 15_000, interval: 250 }).toContainEqual(['Upload finished', `${name} is uploaded: ${listed.url}`]);
    } finally {
      await context.close();
      await proxy.close();
    }
  });

  it('finishes a 170 MB upload across going offline mid-chunk and a reload, byte-identical, never resending stored bytes', { timeout: 400_000 }, async () => {
    const size = 170 * MiB;
    const name = `big-${Date.now()}.bin`;
    const filePath = path.join(tmpDir, name);
    const block = crypto.randomBytes(MiB);
    const hash = crypto.createHash('sha256');
    const fd = fs.openSync(filePath, 'w');
    for (let i = 0; i < 170; i++) {
      block.writeUInt32BE(i, 0); // no two MiB alike
      fs.writeSync(fd, block);
      hash.update(block);
    }
    fs.closeSync(fd);
    const expected = hash.digest('hex');

    const proxy = new CountingProxy();
    const proxyUrl = await proxy.listen();
    proxy.uploadRate = 40 * MiB;
    const { context, page } = await openSignedIn(proxy, proxyUrl);
    let wentOffline = false;
    let reloaded = false;
    const events: Promise<unknown>[] = [];
    proxy.onUploadBytes = (upload) => {
      if (!wentOffline && upload.fields.chunkIndex === '1' && upload.fileBytes >= 30 * MiB) {
        wentOffline = true;
        events.push(
          (async () => {
            await context.setOffline(true);
            await new Promise((r) => setTimeout(r, 4000));
            await context.setOffline(false);
          })(),
        );
        return 'cut';
      }
      // Slower for the last chunk, so the reload surely lands mid-chunk.
      if (upload.fields.chunkIndex === '2') proxy.uploadRate = 4 * MiB;
      if (!reloaded && upload.fields.chunkIndex === '2' && upload.fileBytes >= 2 * MiB) {
        reloaded = true;
        events.push(page.reload());
      }
    };
    try {
      await page.goto(`${stack.siteUrl}/dashboard`);
      await waitForServiceWorker(page);
      await page.getByLabel('Choose files to upload').setInputFiles(filePath);
      const listed = await waitForFile(name, 360_000);
      await Promise.all(events);
      expect(wentOffline).toBe(true);
      expect(reloaded).toBe(true);
      expect(listed.size).toBe(size);
      expect(await sha256OfUrl(listed.url)).toBe(expected);

      const summary = proxy.uploads.map((u) => `${u.fields.chunkIndex}@${u.fields.chunkOffset ?? 0}+${u.fileBytes}${u.cut ? ' cut' : ''}`).join(', ');
      console.log(`170 MB upload requests: ${summary}`);
      // The multipart parser cannot tell the last bytes of a cut body from the start of the
      // closing boundary, so it may keep up to that many fewer bytes than were forwarded; those
      // bytes were never stored and are rightly sent again.
      const boundaryPrefix = Buffer.byteLength(`\r\n--${'-'.repeat(70)}`);
      let notStored = 0;
      for (const chunkIndex of ['1', '2']) {
        const cut = proxy.uploads.find((u) => u.fields.chunkIndex === chunkIndex && u.cut);
        const resumed = proxy.uploads.find((u) => u.fields.chunkIndex === chunkIndex && !u.cut);
        const stored = proxy.storedPartials.filter((p) => String(p.chunkIndex) === chunkIndex).at(-1)?.bytes;
        // The resumed request starts exactly at what the server said it holds, never before it…
        expect(stored, summary).toBeDefined();
        expect(resumed?.fields.chunkOffset, summary).toBe(String(stored));
        // …and the server held on to all but the ambiguous tail of what reached it.
        const lost = cut!.fileBytes - stored!;
        expect(lost, summary).toBeGreaterThanOrEqual(0);
        expect(lost, summary).toBeLessThan(boundaryPrefix);
        notStored += lost;
      }
      // So the server received every byte once, plus only the few it could not keep.
      expect(proxy.totalFileBytes(), summary).toBe(size + notStored);
    } finally {
      await context.close();
      await proxy.close();
    }
  });
});
