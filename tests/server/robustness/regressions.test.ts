import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIALECTS } from '../../helpers/test-app.ts';
import { createHttpTestApp, type HttpTestApp } from '../../helpers/upload.ts';
import { snapshot } from '../accounts/fixtures.ts';
import { rawRequest } from './raw-http.ts';

/** The 5xx and odd answers the robustness tests found, each pinned with the message a user sees. */
describe.each(DIALECTS)('robustness regressions on %s (design §5)', (dialect) => {
  let t: HttpTestApp;
  beforeAll(async () => {
    t = await createHttpTestApp(dialect);
  });
  afterAll(async () => t?.close());

  it('a NUL character in a JSON field is a 400 naming the field (PostgreSQL answered 500)', async () => {
    const before = await snapshot(t);
    const res = await t.call('/api/v1/admin/set/ban', { userId: 'a\u0000b' }, { token: t.admin.token });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ success: false, error: "Field 'userId' contains a character that is not allowed (NUL or a broken surrogate)." });
    const search = await t.call('/api/v1/admin/get/users', { query: '\ud800' }, { token: t.admin.token });
    expect(search.status).toBe(400);
    expect(await snapshot(t)).toBe(before);
  });

  it('a credential no server could have issued is a 401, in the body or a Bearer header (PostgreSQL answered 500 for an API key with NUL)', async () => {
    for (const token of ['stash_ab\u0000c', 'stash_\ud800', 'white space', 'x'.repeat(513)]) {
      const res = await t.call('/api/v1/auth/data', { token });
      expect(res.status, JSON.stringify(token)).toBe(401);
      expect(res.body).toEqual({ success: false, error: 'Your session has expired. Please sign in again.' });
    }
    const bearer = await fetch(`${t.apiUrl}/api/v1/files/uploaded`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer stash_%00' },
      body: '{}',
    });
    expect(bearer.status).toBe(401);
  });

  it('a multipart upload without a usable boundary is a 400, not a 500', async () => {
    const user = await t.createUser();
    for (const type of ['multipart/form-data', 'multipart/form-data; boundary=', 'multipart/form-data; boundary=other']) {
      const body = '--real\r\nContent-Disposition: form-data; name="file"; filename="a"\r\n\r\nhi\r\n--real--\r\n';
      const res = await fetch(`${t.apiUrl}/api/v1/files/upload`, { method: 'POST', headers: { authorization: `Bearer ${user.token}`, 'content-type': type }, body });
      expect(res.status, type).toBe(400);
      const json = (await res.json()) as { success: boolean; error: string };
      expect(json.success).toBe(false);
      expect(json.error).toMatch(/^The multipart body is malformed|^Missing the file part/);
    }
  });

  it('a request Node cannot parse gets our error shape', async () => {
    const answer = await rawRequest(t.apiUrl, 'POST /api/v1/auth/data HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n', '{}');
    expect(answer.status).toBe(400);
    expect(JSON.parse(answer.body)).toEqual({ success: false, error: 'The request is not valid HTTP.' });
  });

  it('a broken percent-escape in the address gets our error shape, without echoing it', async () => {
    const api = await rawRequest(t.apiUrl, 'POST /api/v1/auth/data%zz HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\nConnection: close\r\n\r\n', '');
    expect(api.status).toBe(400);
    expect(JSON.parse(api.body)).toEqual({ success: false, error: 'The address is not valid.' });
    const files = await rawRequest(t.filesUrl, `GET /${'a'.repeat(5000)} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`, '');
    expect(files.status).toBe(414);
    expect(JSON.parse(files.body)).toEqual({ success: false, error: 'The address is too long.' });
  });

  it('a second file part after a stored file gets the stored file as the answer, not an error for a file that exists', async () => {
    const user = await t.createUser();
    const b = 'twofiles';
    const part = (name: string, data: string, filename?: string) =>
      `--${b}\r\nContent-Disposition: form-data; name="${name}"${filename ? `; filename="${filename}"` : ''}\r\n\r\n${data}\r\n`;
    const body = part('originalname', 'first.txt') + part('file', 'first', 'first.txt') + part('file', 'second', 'second.txt') + `--${b}--\r\n`;
    const res = await fetch(`${t.apiUrl}/api/v1/files/upload`, { method: 'POST', headers: { authorization: `Bearer ${user.token}`, 'content-type': `multipart/form-data; boundary=${b}` }, body });
    const json = (await res.json()) as { success: boolean; file?: { original_name: string } };
    expect(res.status).toBe(200);
    expect(json.file?.original_name).toBe('first.txt');
    const listed = await t.deps.db.selectFrom('files').select('original_name').where('user_id', '=', user.id).execute();
    expect(listed.map((f) => f.original_name)).toEqual(['first.txt']);
  });
});
