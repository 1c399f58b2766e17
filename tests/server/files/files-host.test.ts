import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { DIALECTS, type TestUser } from '../../helpers/test-app.ts';
import { createHttpTestApp, randomBytes, sendMultipart, type HttpTestApp } from '../../helpers/upload.ts';

const fixture = (name: string) => fs.readFileSync(path.join(import.meta.dirname, 'fixtures', name));

describe.each(DIALECTS)('the files host on %s (design §8)', (dialect) => {
  let t: HttpTestApp;
  let user: TestUser;
  afterEach(async () => t?.close());

  async function put(data: Buffer, filename: string): Promise<{ name: string; url: string; file: Record<string, unknown> }> {
    const res = await sendMultipart(`${t.apiUrl}/api/v1/files/upload`, { fields: { token: user.token, originalname: filename }, file: { data } });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const url = String(res.body.url);
    return { name: url.split('/').pop() ?? '', url, file: res.body.file as Record<string, unknown> };
  }

  const get = (name: string, headers: Record<string, string> = {}, method = 'GET') => fetch(`${t.filesUrl}/${name}`, { method, headers });

  it('serves ranges as 206 with the right bytes, 416 past the end, and 304 for a known ETag or date', async () => {
    t = await createHttpTestApp(dialect);
    user = await t.createUser();
    const data = randomBytes(5000);
    const { name } = await put(data, 'data.bin');

    const full = await get(name);
    expect(full.status).toBe(200);
    expect(full.headers.get('content-length')).toBe('5000');
    expect(full.headers.get('accept-ranges')).toBe('bytes');
    expect(full.headers.get('cache-control')).toContain('max-age=31536000');
    expect(full.headers.get('x-content-type-options')).toBe('nosniff');
    expect(full.headers.get('content-security-policy')).toContain('sandbox');
    expect(Buffer.from(await full.arrayBuffer()).equals(data)).toBe(true);

    const part = await get(name, { range: 'bytes=100-199' });
    expect(part.status).toBe(206);
    expect(part.headers.get('content-range')).toBe('bytes 100-199/5000');
    expect(Buffer.from(await part.arrayBuffer()).equals(data.subarray(100, 200))).toBe(true);
    const suffix = await get(name, { range: 'bytes=-10' });
    expect(suffix.status).toBe(206);
    expect(Buffer.from(await suffix.arrayBuffer()).equals(data.subarray(4990))).toBe(true);
    const open = await get(name, { range: 'bytes=4000-' });
    expect(Buffer.from(await open.arrayBuffer()).equals(data.subarray(4000))).toBe(true);

    const beyond = await get(name, { range: 'bytes=5000-6000' });
    expect(beyond.status).toBe(416);
    expect(beyond.headers.get('content-range')).toBe('bytes */5000');
    await beyond.arrayBuffer();

    const etag = full.headers.get('etag') ?? '';
    expect(etag).not.toBe('');
    expect((await get(name, { 'if-none-match': etag })).status).toBe(304);
    expect((await get(name, { 'if-none-match': '"other"' })).status).toBe(200);
    const lastModified = full.headers.get('last-modified') ?? '';
    expect((await get(name, { 'if-modified-since': lastModified })).status).toBe(304);

    const head = await get(name, {}, 'HEAD');
    expect(head.status).toBe(200);
    expect(head.headers.get('content-length')).toBe('5000');
  });

  it('never serves HTML disguised as .png as text/html, and never renders SVG or XML inline', async () => {
    t = await createHttpTestApp(dialect);
    user = await t.createUser();
    const html = await put(fixture('evil.html'), 'cat.png');
    expect(html.file.mime_type).toBe('text/plain');
    expect(html.name).toMatch(/\.txt$/);
    const served = await get(html.name);
    expect(served.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    expect(served.headers.get('x-content-type-options')).toBe('nosniff');
    expect(Buffer.from(await served.arrayBuffer()).equals(fixture('evil.html'))).toBe(true);

    // An admin may allow XML; an SVG with an XML prolog is then stored, but only ever downloaded.
    await t.deps.db.insertInto('mime_types').values({ mime: 'application/xml' }).execute();
    t.deps.settings.invalidate();
    const svg = await put(fixture('evil.svg'), 'logo.svg');
    expect(svg.file.mime_type).toBe('application/xml');
    const svgServed = await get(svg.name);
    expect(svgServed.headers.get('content-type')).not.toContain('text/html');
    expect(svgServed.headers.get('content-disposition')).toMatch(/^attachment;/);
    expect(svgServed.headers.get('content-security-policy')).toContain('sandbox');
    await svgServed.arrayBuffer();
  });

  it('reads image types and sizes from the bytes and names the file after its original name per RFC 5987', async () => {
    t = await createHttpTestApp(dialect);
    user = await t.createUser();
    const gif = await put(fixture('300x200.gif'), 'Фото «отпуск».gif');
    expect(gif.file).toMatchObject({ mime_type: 'image/gif', width: 300, height: 200 });
    const res = await get(gif.name);
    expect(res.headers.get('content-type')).toBe('image/gif');
    const disposition = res.headers.get('content-disposition') ?? '';
    expect(disposition).toMatch(/^inline; filename="[\x20-\x7e]+"; filename\*=UTF-8''/);
    expect(decodeURIComponent(disposition.split("UTF-8''")[1] ?? '')).toBe('Фото «отпуск».gif');
    await res.arrayBuffer();
  });

  it('answers 404 for unknown names and for names that are not ours', async () => {
    t = await createHttpTestApp(dialect);
    user = await t.createUser();
    for (const name of ['AAAAAAAAAA.png', '..%2F..%2Fstash.db', 'stash.db', '%2e%2e', 'x']) {
      const res = await get(name);
      expect(res.status, name).toBe(404);
      await res.arrayBuffer();
    }
  });
});
