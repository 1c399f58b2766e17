import { afterEach, describe, expect, it } from 'vitest';
import { cleanOriginalName } from '../../../server/modules/files/file-name.ts';
import { DIALECTS } from '../../helpers/test-app.ts';
import { createHttpTestApp, randomBytes, sendMultipart, type HttpTestApp } from '../../helpers/upload.ts';

/** Issue 8 item 9: what a stored display name may not hold, and how a long one is cut. */
describe('display names', () => {
  it('drops C1 controls and every bidi or direction mark', () => {
    expect(cleanOriginalName('invoice\u202egnp.exe')).toBe('invoicegnp.exe');
    expect(cleanOriginalName('a\u0085b\u009fc\u0080.txt')).toBe('abc.txt');
    for (const mark of ['\u202a', '\u202b', '\u202c', '\u202d', '\u202e', '\u2066', '\u2067', '\u2068', '\u2069', '\u200e', '\u200f', '\u061c']) {
      expect(cleanOriginalName(`x${mark}y.png`), `U+${mark.codePointAt(0)!.toString(16)}`).toBe('xy.png');
    }
    // Letters outside ASCII stay: only invisible controls go.
    expect(cleanOriginalName('Résumé — 東京 🙂.pdf')).toBe('Résumé — 東京 🙂.pdf');
  });

  it('cuts at 255 characters without splitting one', () => {
    const emoji = '🙂'.repeat(300);
    const cut = cleanOriginalName(emoji);
    expect(cut).not.toContain('\ufffd');
    expect(cut).toBe('🙂'.repeat(255));
    // A family emoji is one character on screen: kept whole or dropped whole.
    const family = '👨‍👩‍👧';
    const name = `${'a'.repeat(253)}${family}`;
    expect(cleanOriginalName(name)).toBe('a'.repeat(253));
    expect(cleanOriginalName('a'.repeat(300))).toHaveLength(255);
    // A lone half of a surrogate pair is dropped, not stored as U+FFFD.
    expect(cleanOriginalName('x\ud800y.txt')).toBe('xy.txt');
  });
});

describe.each(DIALECTS)('stored display names on %s', (dialect) => {
  let t: HttpTestApp;
  afterEach(async () => t?.close());

  it('an upload named with a right-to-left override is listed under its real order', async () => {
    t = await createHttpTestApp(dialect);
    const user = await t.createUser();
    const long = `${'é'.repeat(200)}${'🙂'.repeat(100)}.png`;
    for (const [sent, listed] of [
      ['invoice\u202egnp.exe', 'invoicegnp.exe'],
      ['report\u0085\u2067.txt', 'report.txt'],
      [long, `${'é'.repeat(200)}${'🙂'.repeat(55)}`],
    ] as const) {
      const res = await sendMultipart(`${t.apiUrl}/api/v1/files/upload`, { fields: { token: user.token, originalname: sent }, file: { data: randomBytes(50) } });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      const row = await t.deps.db.selectFrom('files').select('original_name').where('actual_name', '=', (res.body.file as { actual_name: string }).actual_name).executeTakeFirstOrThrow();
      expect(row.original_name).toBe(listed);
    }
  });
});
