import crypto from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { copyFile } from '../../../server/tools/migrate.ts';
import { DIALECTS, type TestUser } from '../../helpers/test-app.ts';
import { createHttpTestApp, postJson, sendMultipart, type HttpTestApp } from '../../helpers/upload.ts';
import { pngBomb } from './fixtures/hostile.ts';

interface FileBody {
  actual_name: string;
  mime_type: string;
  width: number | null;
  height: number | null;
}

/** A few bytes of PNG whose header claims `width` × `height` (no pixel rows follow). */
const pngClaiming = (width: number, height: number) => pngBomb(width, height, 0);

/**
 * Spec §3: width and height come from the bytes, and are null when unknown. A header may claim
 * any 32-bit size; PostgreSQL's columns hold 31 bits, so a claim past that was a 500 there (and
 * made `npm run migrate` from SQLite stop on the record SQLite had kept).
 */
describe.each(DIALECTS)('image width and height from headers on %s (spec §3)', (dialect) => {
  let t: HttpTestApp | undefined;
  let target: HttpTestApp | undefined;
  let user: TestUser;
  afterEach(async () => {
    await t?.close();
    await target?.close();
    t = target = undefined;
  });

  const upload = async (data: Buffer, name: string) => {
    const res = await sendMultipart(`${t!.apiUrl}/api/v1/files/upload`, { fields: { token: user.token, originalname: name }, file: { data } });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body.file as FileBody;
  };
  const listed = async (actualName: string) => {
    const res = await postJson(`${t!.apiUrl}/api/v1/files/uploaded`, { token: user.token, pageSize: 100 });
    return (res.body as unknown as { files: FileBody[] }).files.find((f) => f.actual_name === actualName);
  };

  it('records a real header size and lists it', async () => {
    t = await createHttpTestApp(dialect);
    user = await t.createUser();
    const file = await upload(pngClaiming(300, 200), 'small.png');
    expect(file).toMatchObject({ mime_type: 'image/png', width: 300, height: 200 });
    expect(await listed(file.actual_name)).toMatchObject({ width: 300, height: 200 });
  });

  it('takes a PNG claiming 4,294,967,295 pixels of width as a file of unknown size, not a server error', async () => {
    t = await createHttpTestApp(dialect);
    user = await t.createUser();
    for (const [width, height] of [
      [0xffffffff, 10],
      [10, 0x80000000],
    ] as const) {
      const file = await upload(pngClaiming(width, height), `claims-${width}x${height}.png`);
      expect(file).toMatchObject({ mime_type: 'image/png', width: null, height: null });
      expect(await listed(file.actual_name)).toMatchObject({ width: null, height: null });
    }
  });

  it('migrates a record an older version kept with such a size, as unknown', async () => {
    t = await createHttpTestApp('sqlite');
    user = await t.createUser();
    const file = await upload(pngClaiming(300, 200), 'old.png');
    await t.deps.db.updateTable('files').set({ width: 3_123_917_536 }).where('actual_name', '=', file.actual_name).execute();
    const row = await t.deps.db.selectFrom('files').selectAll().where('actual_name', '=', file.actual_name).executeTakeFirstOrThrow();

    target = await createHttpTestApp(dialect);
    const owner = await target.createUser();
    expect(await copyFile(t.deps.storage, target.deps.storage, target.deps.db, { ...row, user_id: owner.id })).toBe('copied');
    const copied = await target.deps.db.selectFrom('files').select(['width', 'height', 'sha256']).where('id', '=', row.id).executeTakeFirstOrThrow();
    expect(copied).toEqual({ width: null, height: null, sha256: crypto.createHash('sha256').update(pngClaiming(300, 200)).digest('hex') });
  });
});
