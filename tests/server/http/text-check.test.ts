import { describe, expect, it } from 'vitest';
import { findUnstorableText } from '../../../server/http/text-check.ts';

/** Design §5: the field named in the 400 for text no database can hold as sent. */
describe('findUnstorableText (server/http/text-check.ts)', () => {
  it('names the field, the array index or the enclosing object of a NUL or a broken surrogate', () => {
    expect(findUnstorableText({ name: 'ok', filters: { q: 'a\u0000b' } })).toBe('filters.q');
    expect(findUnstorableText({ list: ['fine', { deep: ['x', '\ud800'] }] })).toBe('list.1.deep.1');
    expect(findUnstorableText({ outer: { ['bad\udc00key']: 1 } })).toBe('outer');
    expect(findUnstorableText({ ['\u0000']: 1 })).toBe('');
    expect(findUnstorableText('\ud800')).toBe('');
  });

  it('passes storable text, pairs of surrogates and non-text values', () => {
    expect(findUnstorableText({ a: 'émoji 😀', b: [1, null, true, { c: '\ud83d\ude00' }] })).toBeNull();
    expect(findUnstorableText(null)).toBeNull();
    expect(findUnstorableText(42)).toBeNull();
  });

  it('finds the one bad string after 150,000 numbers, and walks 100,000 levels without overflowing the stack', () => {
    const numbers: unknown[] = Array.from({ length: 150_000 }, (_, i) => i);
    numbers.push('tail\u0000');
    expect(findUnstorableText({ x: numbers })).toBe('x.150000');
    let deep: unknown = 'bottom\u0000';
    for (let i = 0; i < 100_000; i++) deep = [deep];
    expect(findUnstorableText(deep)?.split('.')).toHaveLength(100_000);
  });
});
