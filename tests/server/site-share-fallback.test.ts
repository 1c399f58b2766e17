import fs from 'node:fs';
import net, { type AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildSite } from '../../server/app.ts';
import { SHARE_READ_LIMIT } from '../../server/site/share-fallback.ts';
import { SHARE_FAILED_REDIRECT, SHARE_NONE_REDIRECT, SHARE_TARGET_PATH } from '../../contract/site-routes.ts';
import { createTestApp, type TestApp } from '../helpers/test-app.ts';
import { standInBuild } from '../helpers/stand-in-build.ts';

const BOUNDARY = 'stashshare';
const MULTIPART = `multipart/form-data; boundary=${BOUNDARY}`;

interface Part {
  name: string;
  /** Present: a file part, as a browser sends one (an empty string for a file input left empty). */
  filename?: string;
  body: string;
}

function partOf(p: Part): string {
  const disposition = `form-data; name="${p.name}"${p.filename === undefined ? '' : `; filename="${p.filename}"`}`;
  const type = p.filename === undefined ? '' : 'Content-Type: application/octet-stream\r\n';
  return `--${BOUNDARY}\r\nContent-Disposition: ${disposition}\r\n${type}\r\n${p.body}\r\n`;
}
const form = (...parts: Part[]) => parts.map(partOf).join('') + `--${BOUNDARY}--\r\n`;

/**
 * The site's answer to a share no service worker took (server/site/share-fallback.ts): the same
 * notice the service worker would give (src/sw/share-target.ts), `shared=none` when no file came,
 * else `shared=failed`, since the server cannot keep the files.
 */
describe('a share no service worker took', () => {
  let t: TestApp;
  let site: FastifyInstance;
  let dist: string;

  beforeAll(async () => {
    dist = standInBuild();
    t = await createTestApp('sqlite', {});
    site = await buildSite(t.deps, dist);
    await site.listen({ port: 0, host: '127.0.0.1' });
  });
  afterAll(async () => {
    await site?.close();
    await t?.close();
    fs.rmSync(dist, { recursive: true, force: true });
  });

  const share = (payload: string, contentType = MULTIPART) => site.inject({ method: 'POST', url: SHARE_TARGET_PATH, headers: { 'content-type': contentType }, payload });

  it.each<[string, string, string?]>([
    ['only a text and a link', form({ name: 'text', body: 'look at this' }, { name: 'url', body: 'https://example.org/' })],
    ['the file input left empty (no name, no bytes)', form({ name: 'file', filename: '', body: '' })],
    ['a file under a field the manifest does not name, which the service worker ignores', form({ name: 'other', filename: 'a.txt', body: 'hello' })],
    ['a form with no part at all', `--${BOUNDARY}--\r\n`],
    ['a URL-encoded form', 'text=look+at+this&url=https%3A%2F%2Fexample.org%2F', 'application/x-www-form-urlencoded'],
  ])('sends a share that carried no file, %s, to the app’s “nothing was shared”', async (_what, payload, contentType) => {
    const res = await share(payload, contentType);
    expect(res.statusCode).toBe(303);
    expect(res.headers.location).toBe(SHARE_NONE_REDIRECT);
  });

  it.each<[string, string, string?]>([
    ['a named file', form({ name: 'file', filename: 'clip.mp4', body: 'x'.repeat(100_000) })],
    ['a file with no name but bytes', form({ name: 'file', filename: '', body: 'hello' })],
    ['a text, then a file', form({ name: 'text', body: 'look' }, { name: 'file', filename: 'a.png', body: 'png' })],
    ['an empty file with a name', form({ name: 'file', filename: 'empty.txt', body: '' })],
    ['a multipart body cut off before its end', partOf({ name: 'text', body: 'look' })],
    ['a body that is no form', 'just text', 'text/plain'],
  ])('sends a share with %s to the app’s “pick them again”', async (_what, payload, contentType) => {
    const res = await share(payload, contentType);
    expect(res.statusCode).toBe(303);
    expect(res.headers.location).toBe(SHARE_FAILED_REDIRECT);
  });

  /** Sends the head and `sent` of a body announced as `length` bytes, and returns the answer's head while the rest is still owed. */
  async function answerBeforeTheEnd(sent: string, length: number): Promise<string> {
    const socket = net.connect((site.server.address() as AddressInfo).port, '127.0.0.1');
    try {
      socket.write(`POST ${SHARE_TARGET_PATH} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: ${MULTIPART}\r\nContent-Length: ${length}\r\n\r\n${sent}`);
      let head = '';
      for await (const chunk of socket) {
        head += (chunk as Buffer).toString('latin1');
        if (head.includes('\r\n\r\n')) break;
      }
      return head;
    } finally {
      socket.destroy();
    }
  }

  it('answers a file share at the file’s first bytes, without reading the rest', async () => {
    const head = await answerBeforeTheEnd(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="clip.mp4"\r\n\r\nfirst bytes`, 100 * 1024 * 1024);
    expect(head).toMatch(/^HTTP\/1\.1 303 /);
    expect(head.toLowerCase()).toContain(`location: ${SHARE_FAILED_REDIRECT}\r\n`);
  });

  it(`reads no more than ${SHARE_READ_LIMIT} bytes of a body that names no file, and then gives the answer for one`, async () => {
    const head = await answerBeforeTheEnd(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="text"\r\n\r\n${'x'.repeat(SHARE_READ_LIMIT + 1)}`, 100 * 1024 * 1024);
    expect(head).toMatch(/^HTTP\/1\.1 303 /);
    expect(head.toLowerCase()).toContain(`location: ${SHARE_FAILED_REDIRECT}\r\n`);
  });
});
