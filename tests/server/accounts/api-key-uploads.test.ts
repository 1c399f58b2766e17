import { afterEach, describe, expect, it } from 'vitest';
import { buildSharexConfig } from '../../../src/features/settings/sharex.ts';
import { DIALECTS } from '../../helpers/test-app.ts';
import { createHttpTestApp, postJson, sendMultipart, type HttpTestApp } from '../../helpers/upload.ts';

/**
 * API keys as ShareX uses them (spec §5, design §6): one multipart request with the key as a
 * Bearer header, read back through the config's `URL` and `ErrorMessage` fields. A revoked key
 * and a banned owner's key stop at once, on every route a key may call.
 */
describe.each(DIALECTS)('API key uploads on %s', (dialect) => {
  let t: HttpTestApp;
  afterEach(async () => t?.close());

  it("the ShareX config uploads, and a revoked key or a banned owner's key is refused everywhere", async () => {
    t = await createHttpTestApp(dialect);
    const u = await t.createUser();
    const gen = await t.call<{ apiKey: { _id: string; key: string } }>('/api/v1/auth/apikeys/generate', {}, { token: u.token });
    const sharex = buildSharexConfig(`${t.apiUrl}/`, gen.body.apiKey.key, 'Stash');
    const bearer = /^Bearer (\S+)$/.exec(sharex.Headers.Authorization)?.[1] ?? '';
    const upload = (key: string) => sendMultipart(sharex.RequestURL, { bearer: key, file: { name: sharex.FileFormName, data: Buffer.from('from sharex\n'), filename: 'shot.txt' } });

    const sent = await upload(bearer);
    expect(sent.status).toBe(200);
    // `{json:url}` is what ShareX copies: the file's link on the files host.
    expect(String(sent.body[/^\{json:(\w+)\}$/.exec(sharex.URL)?.[1] ?? ''])).toMatch(new RegExp(`^${t.deps.config.urls.files}/[A-Za-z0-9_-]+\\.txt$`));

    const refusedEverywhere = async (key: string, status: number) => {
      const answers = [
        await upload(key),
        await postJson(`${t.apiUrl}/api/v1/files/upload-url`, { token: key, url: 'http://127.0.0.1:9/x.txt' }),
        await postJson(`${t.apiUrl}/api/v1/files/uploaded`, { token: key }),
        await postJson(`${t.apiUrl}/api/v1/files/delete`, { token: key, filePath: 'AAAAAAAAAA.txt' }),
      ];
      for (const a of answers) {
        expect(a.status).toBe(status);
        // `{json:error}` is what ShareX shows: a sentence, never empty.
        expect(String(a.body[/^\{json:(\w+)\}$/.exec(sharex.ErrorMessage)?.[1] ?? '']).length).toBeGreaterThan(0);
      }
    };

    await t.call('/api/v1/admin/set/ban', { userId: u.id }, { token: t.admin.token });
    await refusedEverywhere(bearer, 403);
    await t.call('/api/v1/admin/set/ban', { userId: u.id }, { token: t.admin.token });
    expect((await upload(bearer)).status).toBe(200);

    // The ban ended the owner's sessions (design §6): sign in again to revoke.
    const session = (await t.call<{ token: string }>('/api/v1/auth/login', { username: u.username, password: u.password })).body.token;
    expect((await t.call('/api/v1/auth/apikeys/revoke', { apiKey: gen.body.apiKey._id }, { token: session })).status).toBe(200);
    await refusedEverywhere(bearer, 401);
  });
});
