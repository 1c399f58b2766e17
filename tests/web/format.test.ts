import { describe, expect, it } from 'vitest';
import { formatBytes, formatDate, formatFileSize, formatMaxFileSize, shortName } from '../../src/lib/format.ts';

describe('formatBytes (spec §9: GB from 1073741824 bytes, else MB)', () => {
  it('shows MB below one GB', () => {
    expect(formatBytes(0)).toBe('0.00 MB');
    expect(formatBytes(1_048_576)).toBe('1.00 MB');
    expect(formatBytes(1_073_741_823)).toBe('1024.00 MB');
  });
  it('switches to GB with two decimals at exactly 1073741824 bytes', () => {
    expect(formatBytes(1_073_741_824)).toBe('1.00 GB');
    expect(formatBytes(1_610_612_736)).toBe('1.50 GB');
  });
});

describe('formatMaxFileSize (spec §9: GB with two decimals from 1024 MB)', () => {
  it('keeps MB under 1024', () => {
    expect(formatMaxFileSize(100)).toBe('100 MB');
    expect(formatMaxFileSize(1023)).toBe('1023 MB');
  });
  it('shows GB from 1024 MB', () => {
    expect(formatMaxFileSize(1024)).toBe('1.00 GB');
    expect(formatMaxFileSize(2560)).toBe('2.50 GB');
  });
});

describe('formatDate (spec §9: month-day-year)', () => {
  it('puts the month first', () => {
    const seconds = new Date(2026, 0, 5, 12).getTime() / 1000;
    expect(formatDate(seconds)).toBe('01-05-2026');
    expect(formatDate(new Date(2025, 11, 31, 12).getTime() / 1000)).toBe('12-31-2025');
  });
});

describe('formatFileSize (issue 11: a photo is not "0.29 MB")', () => {
  it('shows bytes, then KB below 1 MB, then the spec §9 MB/GB rule', () => {
    expect([0, 1023, 1024, 300 * 1024, 1_048_576, 1_073_741_824].map(formatFileSize)).toEqual(['0 B', '1023 B', '1 KB', '300 KB', '1.00 MB', '1.00 GB']);
  });
});

describe('shortName (a long file name in a list)', () => {
  it('keeps a name of up to 64 characters whole', () => {
    const name = `${'x'.repeat(60)}.png`;
    expect(shortName(name)).toBe(name);
  });

  it('leaves out the middle of a longer one, keeping its start, its last 20 characters and the extension', () => {
    const name = `IMG_${'a'.repeat(100)}_holiday_0042.jpeg`;
    const shown = shortName(name);
    expect([...shown]).toHaveLength(64);
    expect(shown).toBe(`IMG_${'a'.repeat(39)}…aa_holiday_0042.jpeg`);
  });

  it('counts characters, not UTF-16 units, so an emoji is never split', () => {
    const shown = shortName(`${'📷'.repeat(80)}.png`);
    expect([...shown]).toHaveLength(64);
    expect(shown.endsWith(`${'📷'.repeat(16)}.png`)).toBe(true);
  });
});
