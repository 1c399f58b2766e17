import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/test-app.ts';
import { buildSite } from '../../server/app.ts';
import { precompressDir } from '../../scripts/precompress.mjs';

/** Design §11 and issue 9: the site sends its build brotli- or gzip-compressed, made once at build time. */
describe('the site serves its build pre-compressed', () => {
  let t: TestApp;
  let site: FastifyInstance;
  let dist: string;
  const app = `console.log(${JSON.stringify('stash '.repeat(2000))});`;
  const shell = `<!doctype html><title>Stash</title><script type="module" src="/assets/app-abc123.js"></script>${'<!-- shell -->'.repeat(200)}`;

  beforeAll(async () => {
    t = await createTestApp('sqlite');
    dist = fs.mkdtempSync(path.join(os.tmpdir(), 'stash-dist-'));
    fs.mkdirSync(path.join(dist, 'assets'));
    fs.writeFileSync(path.join(dist, 'index.html'), shell);
    fs.writeFileSync(path.join(dist, 'sw.js'), `self.addEventListener('fetch', () => {});${' '.repeat(3000)}`);
    fs.writeFileSync(path.join(dist, 'assets', 'app-abc123.js'), app);
    fs.writeFileSync(path.join(dist, 'assets', 'tiny-abc123.js'), 'x');
    fs.writeFileSync(path.join(dist, 'assets', 'logo-abc123.png'), Buffer.alloc(4000, 1));
    precompressDir(dist);
    site = await buildSite(t.deps, dist);
  });
  afterAll(async () => {
    await site?.close();
    await t?.close();
    fs.rmSync(dist, { recursive: true, force: true });
  });

  const get = (url: string, encoding?: string) => site.inject({ method: 'GET', url, headers: encoding ? { 'accept-encoding': encoding } : {} });

  it('makes .br and .gz twins of text files at build time, never of images or tiny files', () => {
    const asset = (name: string) => path.join(dist, 'assets', name);
    expect(zlib.brotliDecompressSync(fs.readFileSync(asset('app-abc123.js.br'))).toString()).toBe(app);
    expect(zlib.gunzipSync(fs.readFileSync(asset('app-abc123.js.gz'))).toString()).toBe(app);
    expect(fs.statSync(asset('app-abc123.js.br')).size).toBeLessThan(app.length / 10);
    expect(fs.existsSync(asset('logo-abc123.png.br'))).toBe(false);
    expect(fs.existsSync(asset('tiny-abc123.js.br'))).toBe(false);
  });

  it('answers with brotli, gzip or the plain file by Accept-Encoding, always with Vary', async () => {
    const br = await get('/assets/app-abc123.js', 'gzip, deflate, br');
    expect(br.headers['content-encoding']).toBe('br');
    expect(zlib.brotliDecompressSync(br.rawPayload).toString()).toBe(app);
    expect(String(br.headers.vary)).toMatch(/accept-encoding/i);
    expect(br.headers['content-type']).toMatch(/javascript/);

    const gz = await get('/assets/app-abc123.js', 'gzip');
    expect(gz.headers['content-encoding']).toBe('gzip');
    expect(zlib.gunzipSync(gz.rawPayload).toString()).toBe(app);

    const plain = await get('/assets/app-abc123.js');
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(plain.body).toBe(app);
    expect(String(plain.headers.vary)).toMatch(/accept-encoding/i);
  });

  it('caches hashed assets for a year and revalidates the shell and the service worker', async () => {
    expect((await get('/assets/app-abc123.js', 'br')).headers['cache-control']).toBe('public, max-age=31536000, immutable');
    for (const url of ['/', '/index.html', '/sw.js', '/dashboard']) {
      const res = await get(url, 'br');
      expect(res.statusCode, url).toBe(200);
      expect(res.headers['cache-control'], url).toBe('no-cache');
      expect(res.headers['content-encoding'], url).toBe('br');
    }
    // A client route is the shell, compressed like the file itself.
    expect(zlib.brotliDecompressSync((await get('/dashboard', 'br')).rawPayload).toString()).toBe(shell);
  });
});
