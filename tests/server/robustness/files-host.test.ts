import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIALECTS } from '../../helpers/test-app.ts';
import { createHttpTestApp, sendMultipart, type HttpTestApp } from '../../helpers/upload.ts';
import { rawRequest } from './raw-http.ts';

/** Odd paths and headers at the files host (design §8): never a 5xx, never a byte from outside storage. */

const CONTENT = 'hello, stored file!';
const SECRET = 'TOP-SECRET-OUTSIDE-STORAGE';

describe.each(DIALECTS)('the files host with odd requests on %s (design §8)', (dialect) => {
  let t: HttpTestApp;
  let name: string;
  beforeAll(async () => {
    t = await createHttpTestApp(dialect);
    const user = await t.createUser();
    const up = await sendMultipart(`${t.apiUrl}/api/v1/files/upload`, { bearer: user.token, fields: { originalname: 'note.txt' }, file: { data: Buffer.from(CONTENT) } });
    expect(up.status).toBe(200);
    name = String(up.body.url).split('/').pop() ?? '';
    // Files a path trick would reach: the database, a secret next to storage, /etc/passwd.
    fs.writeFileSync(path.join(t.dataDir, 'secret.txt'), SECRET);
  });
  afterAll(async () => t?.close());

  const get = (target: string, headers: string[] = [], method = 'GET') =>
    rawRequest(t.filesUrl, [`${method} ${target} HTTP/1.1`, 'Host: 127.0.0.1', ...headers, 'Connection: close', '', ''].join('\n'), '');

  function expectNoLeak(answer: { status: number; body: string }) {
    expect(answer.status, answer.body).toBeGreaterThanOrEqual(200);
    expect(answer.status, answer.body).toBeLessThan(500);
    expect(answer.body).not.toContain(SECRET);
    expect(answer.body).not.toContain('root:');
    expect(answer.body).not.toContain('SQLite format');
  }

  const ODD_PATHS = [
    '/..%2f..%2fetc%2fpasswd',
    '/..%2F..%2F..%2F..%2Fetc%2Fpasswd',
    '/../../etc/passwd',
    '/..%5c..%5csecret.txt',
    '/%2e%2e/secret.txt',
    '/%2e%2e%2fsecret.txt',
    '/..%252f..%252fsecret.txt',
    '/secret.txt',
    '/stash.db',
    '/storage/files',
    '/%00',
    '/a%00.txt',
    '/%ff%fe',
    '/%',
    '/%zz',
    `/${'a'.repeat(5000)}`,
    `/${'a'.repeat(60_000)}`,
    '/a/b',
    '/a/b/c/../../..',
    '//etc/passwd',
    '/.',
    '/..',
    '/?name=../../secret.txt',
    '/healthz/..%2f..%2fsecret.txt',
  ];

  it.each(ODD_PATHS)('GET %s is refused without leaking anything', async (target) => {
    const answer = await get(target);
    expectNoLeak(answer);
    if (answer.status !== 200) {
      // Any refusal reads like every other answer of ours (design §5).
      const parsed = JSON.parse(answer.body) as { success: unknown; error: unknown };
      expect(parsed.success).toBe(false);
      expect(typeof parsed.error).toBe('string');
    }
  });

  it('the stored file itself, and a name with a traversal suffix, behave', async () => {
    expect((await get(`/${name}`)).body).toBe(CONTENT);
    expectNoLeak(await get(`/${name}%2f..%2f..%2fsecret.txt`));
    expectNoLeak(await get(`/${name}/..`));
  });

  const RANGES = [
    'bytes=-',
    'bytes=5-1',
    'bytes=0-0,2-3',
    'bytes=0-99999999999999999999',
    'bytes=99999999999999999999-',
    'bytes=-99999999999999999999',
    'bytes=-0',
    'bytes=0--1',
    'bytes=1e3-2e3',
    'bytes= 0-1',
    'bits=0-1',
    'bytes=',
    'bytes=0-1'.repeat(1000),
    'bytes=\u00ff-1',
  ];

  it.each(RANGES)('Range: %s gets a sound answer', async (range) => {
    const answer = await get(`/${name}`, [`Range: ${range}`]);
    expectNoLeak(answer);
    expect([200, 206, 416]).toContain(answer.status);
    if (answer.status === 200) expect(answer.body).toBe(CONTENT);
    if (answer.status === 206) expect(CONTENT).toContain(answer.body);
  });

  const CONDITIONALS = [
    ['If-None-Match', '*'],
    ['If-None-Match', '"'],
    ['If-None-Match', ','.repeat(5000)],
    ['If-None-Match', 'W/'],
    ['If-Modified-Since', 'not a date'],
    ['If-Modified-Since', 'Sat, 01 Jan 275760 00:00:00 GMT'],
    ['If-Modified-Since', '-1'],
    ['If-Range', 'garbage'],
    ['If-Range', 'Sat, 01 Jan 2000 00:00:00 GMT'],
    ['If-Match', '"nope"'],
    ['If-Unmodified-Since', 'yesterday'],
  ];

  it.each(CONDITIONALS)('%s: %s gets a sound answer', async (header, value) => {
    const answer = await get(`/${name}`, [`${header}: ${value}`, 'Range: bytes=0-3']);
    expectNoLeak(answer);
    expect([200, 206, 304, 412, 416]).toContain(answer.status);
  });

  it('other methods on the files host are refused with a 4xx', async () => {
    for (const method of ['POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'TRACE']) {
      const answer = await get(`/${name}`, ['Content-Length: 0'], method);
      expect(answer.status, `${method}: ${answer.body}`).toBeGreaterThanOrEqual(400);
      expect(answer.status, `${method}: ${answer.body}`).toBeLessThan(500);
    }
    // And the file is still there, unchanged.
    expect((await get(`/${name}`)).body).toBe(CONTENT);
  });
});
