import { afterEach, describe, expect, it, vi } from 'vitest';
import { newId } from '../../../server/lib/ids.ts';

describe('record ids', () => {
  afterEach(() => vi.restoreAllMocks());

  it('are 24 hex characters that grow in the order they were made, many to a millisecond', () => {
    const before = Date.now();
    const ids = Array.from({ length: 20_000 }, () => newId());
    const after = Date.now();
    for (const id of ids) expect(id).toMatch(/^[0-9a-f]{24}$/);
    expect(new Set(ids).size).toBe(ids.length);
    // Sorted as the database sorts text of one length: the order they were made in.
    expect([...ids].sort()).toEqual(ids);
    const madeAt = (id: string) => parseInt(id.slice(0, 12), 16);
    expect(madeAt(ids[0]!)).toBeGreaterThanOrEqual(before);
    expect(madeAt(ids.at(-1)!)).toBeLessThanOrEqual(after + 1);
  });

  it('keep growing when the clock steps back', () => {
    const first = newId();
    const now = Date.now();
    vi.spyOn(Date, 'now').mockReturnValue(now - 60_000);
    const later = [newId(), newId(), newId()];
    expect([first, ...later].sort()).toEqual([first, ...later]);
  });

  it('start from fresh random bits each millisecond', () => {
    const now = Date.now() + 1_000;
    const spy = vi.spyOn(Date, 'now');
    const lows = new Set<string>();
    for (let i = 0; i < 50; i++) {
      spy.mockReturnValue(now + i);
      lows.add(newId().slice(12));
    }
    expect(lows.size).toBe(50);
  });
});
