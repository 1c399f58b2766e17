import { afterEach, describe, expect, it } from 'vitest';
import { DIALECTS, type TestUser } from '../../helpers/test-app.ts';
import { createHttpTestApp, randomBytes, sendMultipart, type HttpTestApp } from '../../helpers/upload.ts';
import { until } from '../../helpers/poll.ts';
import { countKey } from '../../../server/modules/files/name-counts.ts';
import { lowerEachLetter } from '../../../server/modules/files/name-probe.ts';
import { fingerprint } from './fixtures.ts';

describe('name filters fold case as the database does', () => {
  it('keeps one count for needles that differ in ASCII case only, and lower-cases probe pieces a letter at a time', () => {
    expect(countKey({ userId: 'u', originalName: 'PnG' })).toBe(countKey({ userId: 'u', originalName: 'png' }));
    expect(countKey({ originalName: 'ΟΔΟΣ' })).not.toBe(countKey({ originalName: 'οδος' }));
    expect(lowerEachLetter('ΟΔΟΣ')).toBe('οδοσ');
    expect(lowerEachLetter('Ab𝕏Ü')).toBe('ab𝕏ü');
    expect(lowerEachLetter('İst')).toBeNull();
  });
});

interface ListBody {
  files: { actual_name: string; original_name: string; username: string }[];
  totalImages: number;
}

/**
 * Design §5 and §6, the files and admin calls as a careless client or an attacker sends them:
 * LIKE's wildcards match literally, odd pages are a 400 or an empty page, a path never reaches
 * another user's file, and two admins acting on one account at once never answer 500.
 */
describe.each(DIALECTS)('files and admin calls under hostile input on %s', (dialect) => {
  let t: HttpTestApp;
  afterEach(async () => t?.close());

  async function put(user: TestUser, name: string) {
    const res = await sendMultipart(`${t.apiUrl}/api/v1/files/upload`, { fields: { token: user.token, originalname: name }, file: { data: randomBytes(20) } });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body.file as { actual_name: string; original_name: string };
  }

  /** The previews an upload leaves to the background are made, so a later fingerprint sees only what a call changed. */
  async function settled() {
    const pending = await until(
      () => t.deps.db.selectFrom('files').select('id').where('previews', 'is', null).execute(),
      (rows) => rows.length === 0,
    );
    expect(pending).toEqual([]);
    return fingerprint(t);
  }

  it('matches %, _ and \\ in every name filter literally', async () => {
    t = await createHttpTestApp(dialect);
    const user = await t.createUser({ username: 'wild_card' });
    await t.createUser({ username: 'wildxcard' });
    const stored = new Map<string, string>();
    for (const name of ['a%b.bin', 'a_b.bin', 'a\\b.bin', 'axb.bin', 'ab.bin']) stored.set(name, (await put(user, name)).original_name);
    const names = async (filter: string) => {
      const res = await t.call<ListBody>('/api/v1/files/uploaded', { filters: { name: filter }, pageSize: 100 }, { token: user.token });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      return res.body.files.map((f) => f.original_name).sort();
    };
    expect(await names('%')).toEqual([stored.get('a%b.bin')]);
    expect(await names('_')).toEqual([stored.get('a_b.bin')]);
    expect(await names('a_b')).toEqual([stored.get('a_b.bin')]);
    expect(await names('a%b')).toEqual([stored.get('a%b.bin')]);
    expect(await names('\\%')).toEqual([]);
    if (stored.get('a\\b.bin')!.includes('\\')) expect(await names('\\')).toEqual([stored.get('a\\b.bin')]);
    else expect(await names('\\')).toEqual([]);

    const admin = async (filters: Record<string, string>) => {
      const res = await t.call<ListBody>('/api/v1/admin/get/uploaded', { filters, pageSize: 100 }, { token: t.admin.token });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      return res.body.totalImages;
    };
    expect(await admin({ username: 'wild_card' })).toBe(5);
    expect(await admin({ username: 'd_c' })).toBe(5);
    expect(await admin({ username: '%' })).toBe(0);
    expect(await admin({ actualName: '%' })).toBe(0);
    expect(await admin({ actualName: '.%' })).toBe(0);
    expect(await admin({ actualName: '_\\' })).toBe(0);
    expect(await admin({ originalName: '\\' })).toBe(stored.get('a\\b.bin')!.includes('\\') ? 1 : 0);

    const users = await t.call<{ users: { username: string }[] }>('/api/v1/admin/get/users', { query: 'd_c' }, { token: t.admin.token });
    expect(users.body.users.map((u) => u.username)).toEqual(['wild_card']);
  });

  it("finds a file by any piece of its name exactly as it is written, whatever the letters' case rules", async () => {
    t = await createHttpTestApp(dialect);
    const user = await t.createUser();
    // JavaScript lower-cases a final capital sigma to ς and İ to two characters; the database does neither.
    const names = ['ΟΔΟΣ.bin', 'Ünïcode.bin', 'İstanbul.bin'];
    for (const name of names) expect((await put(user, name)).original_name).toBe(name);
    for (const [needle, name] of [['ΟΔΟΣ', 'ΟΔΟΣ.bin'], ['ΔΟΣ.', 'ΟΔΟΣ.bin'], ['Ünï', 'Ünïcode.bin'], ['Ü', 'Ünïcode.bin'], ['İst', 'İstanbul.bin'], ['İSTANBUL', 'İstanbul.bin']]) {
      for (const [path, filters, token] of [
        ['/api/v1/files/uploaded', { name: needle }, user.token],
        ['/api/v1/admin/get/uploaded', { originalName: needle }, t.admin.token],
      ] as const) {
        const res = await t.call<ListBody>(path, { filters }, { token });
        expect(res.body.files.map((f) => f.original_name), `${path} ${needle}`).toEqual([name]);
        expect(res.body.totalImages, `${path} ${needle}`).toBe(1);
      }
    }
    // JavaScript lower-cases both to οδος; the database matches only the first, so the count kept
    // for one (files/name-counts.ts) must not answer for the other.
    const small = await t.call<ListBody>('/api/v1/files/uploaded', { filters: { name: 'οδος' } }, { token: user.token });
    expect(small.body).toMatchObject({ files: [], totalImages: 0 });
  });

  it('answers long and odd-Unicode filters with 200, and unstorable ones with 400', async () => {
    t = await createHttpTestApp(dialect);
    const user = await t.createUser();
    await put(user, 'Ünïcode-𝕏-🙂.bin');
    const odd = ['🙂'.repeat(128), 'x'.repeat(256), '\u202e', '\ufeff', '𝕏', 'ünï', "' OR 1=1 --", '"', '""', 'a"b"c', '*', 'NEAR(a b)', 'a AND b'];
    for (const name of odd) {
      for (const [path, body] of [
        ['/api/v1/files/uploaded', { filters: { name } }],
        ['/api/v1/admin/get/uploaded', { filters: { originalName: name, actualName: name, username: name } }],
        ['/api/v1/admin/get/users', { query: name }],
        ['/api/v1/admin/get/invitelogs', { filters: { inviteKey: name, createdBy: name, claimedBy: name } }],
        ['/api/v1/manage/invites', { filters: { claimedBy: name } }],
      ] as const) {
        const res = await t.call(path, body, { token: path.includes('/admin/') ? t.admin.token : user.token });
        expect(res.status, `${path} ${JSON.stringify(name)}: ${JSON.stringify(res.body)}`).toBe(200);
      }
    }
    const before = await settled();
    for (const name of ['a\u0000b', '\ud800', 'x'.repeat(257)]) {
      const res = await t.call('/api/v1/files/uploaded', { filters: { name } }, { token: user.token });
      expect(res.status, JSON.stringify(name)).toBe(400);
      expect(typeof res.body.error).toBe('string');
    }
    expect(await fingerprint(t)).toBe(before);
  });

  it('answers pages past the end with an empty page and odd page numbers with 400, on every paged list', async () => {
    t = await createHttpTestApp(dialect);
    const user = await t.createUser();
    await put(user, 'one.bin');
    const lists: [string, string, Record<string, unknown>][] = [
      ['/api/v1/files/uploaded', 'pageSize', {}],
      ['/api/v1/files/uploaded', 'pageSize', { filters: { name: 'one' } }],
      ['/api/v1/files/uploaded', 'pageSize', { filters: { name: 'o' }, sort: 'largest' }],
      ['/api/v1/admin/get/uploaded', 'pageSize', {}],
      ['/api/v1/admin/get/uploaded', 'pageSize', { filters: { actualName: 'a', originalName: 'one.b' }, sort: 'oldest' }],
      ['/api/v1/admin/get/users', 'limit', {}],
      ['/api/v1/admin/get/invitelogs', 'limit', {}],
      ['/api/v1/manage/invites', 'limit', {}],
    ];
    const before = await settled();
    for (const [path, sizeField, extra] of lists) {
      const token = path.includes('/admin/') ? t.admin.token : user.token;
      const last = await t.call(path, { ...extra, page: 1_000_000, [sizeField]: 100 }, { token });
      expect(last.status, `${path}: ${JSON.stringify(last.body)}`).toBe(200);
      for (const page of [0, -1, 1.5, '2', 1_000_001, 2 ** 31, 2 ** 53, 1e308, null, true, [1], { n: 1 }]) {
        const res = await t.call(path, { ...extra, page }, { token });
        expect(res.status, `${path} page ${JSON.stringify(page)}: ${JSON.stringify(res.body)}`).toBe(400);
        expect(typeof res.body.error).toBe('string');
      }
      for (const size of [0, -6, 2.5, 101, '6']) {
        const res = await t.call(path, { ...extra, [sizeField]: size }, { token });
        expect(res.status, `${path} ${sizeField} ${JSON.stringify(size)}`).toBe(400);
      }
    }
    expect(await fingerprint(t)).toBe(before);
  });

  it("never deletes another user's file through a path, a URL or an encoded name, and a mod never reaches admin calls", async () => {
    t = await createHttpTestApp(dialect);
    const owner = await t.createUser();
    const thief = await t.createUser();
    const mod = await t.createUser({ role: 'mod' });
    const file = await put(owner, 'mine.bin');
    const before = await settled();
    const n = file.actual_name;
    for (const filePath of [`../${n}`, `../../${owner.username}/${n}`, `https://evil.example/${n}`, `${n}/`, `${n}%00`, encodeURIComponent(`../${n}`), `..\\${n}`, `${n}?x=1`, ` ${n}`, n.toUpperCase(), '.', '..', '/']) {
      const res = await t.call('/api/v1/files/delete', { filePath }, { token: thief.token });
      expect(res.status, `${filePath}: ${JSON.stringify(res.body)}`).toBe(404);
    }
    for (const [path, body] of [
      ['/api/v1/admin/set/ban', { userId: owner.id }],
      ['/api/v1/admin/set/remove', { userId: owner.id }],
      ['/api/v1/admin/update/role', { userId: thief.id, newRole: 'mod' }],
      ['/api/v1/admin/update/username', { targetUserId: t.admin.id, newUsername: 'taken_over' }],
      ['/api/v1/admin/update/userpass', { userId: t.admin.id, newPassword: 'a-new-password' }],
      ['/api/v1/admin/update/settings', { setting: 'maintenance_mode', value: true }],
      ['/api/v1/admin/set/uploadlimit', { roleName: 'mod', invitesAllowed: 100 }],
      ['/api/v1/admin/create/invites', { count: 1 }],
      ['/api/v1/admin/update/mimetypes', { mimeTypes: 'application/x-msdownload' }],
      ['/api/v1/admin/get/allstats', {}],
    ] as const) {
      const res = await t.call(path, body, { token: mod.token });
      expect(res.status, path).toBe(403);
    }
    expect(await fingerprint(t)).toBe(before);
  });

  it('two admins banning, demoting and removing one account at once answer no 500 and leave it gone', async () => {
    t = await createHttpTestApp(dialect);
    const second = await t.createUser({ role: 'admin' });
    for (let round = 0; round < 5; round++) {
      const target = await t.createUser({ role: 'mod' });
      await put(target, `r${round}.bin`);
      const answers = await Promise.all([
        t.call('/api/v1/admin/set/remove', { userId: target.id }, { token: t.admin.token }),
        t.call('/api/v1/admin/set/ban', { userId: target.id }, { token: second.token }),
        t.call('/api/v1/admin/update/role', { userId: target.id, newRole: 'default' }, { token: second.token }),
        t.call('/api/v1/admin/set/remove', { userId: target.id }, { token: second.token }),
        t.call('/api/v1/admin/update/username', { targetUserId: target.id, newUsername: `renamed_${round}` }, { token: second.token }),
      ]);
      for (const a of answers) expect([200, 404], JSON.stringify(a.body)).toContain(a.status);
      expect(answers.filter((a) => a.status === 200 && a.body.message === 'User deleted.')).toHaveLength(1);
      const users = await t.call<{ users: { _id: string }[] }>('/api/v1/admin/get/users', { limit: 100 }, { token: t.admin.token });
      expect(users.body.users.map((u) => u._id)).not.toContain(target.id);
    }
    // One file deleted by its owner, a mod and an admin at once: one delete, no 500.
    const owner = await t.createUser();
    const mod = await t.createUser({ role: 'mod' });
    const file = await put(owner, 'contested.bin');
    const deletes = await Promise.all([
      t.call('/api/v1/files/delete', { filePath: file.actual_name }, { token: owner.token }),
      t.call('/api/v1/admin/update/delete', { filePath: file.actual_name }, { token: mod.token }),
      t.call('/api/v1/admin/update/delete', { filePath: `https://files.example/${file.actual_name}` }, { token: second.token }),
    ]);
    for (const d of deletes) expect([200, 404], JSON.stringify(d.body)).toContain(d.status);
    expect(await t.deps.db.selectFrom('files').select('id').where('actual_name', '=', file.actual_name).execute()).toEqual([]);
    // Both admins are still admins and can still act.
    const roles = await t.deps.db.selectFrom('users').select('role').where('role', '=', 'admin').execute();
    expect(roles).toHaveLength(2);
  });
});
