import { describe, expect, it } from 'vitest';
import { carriedAnchors, orderOf, type Change } from '../../../server/modules/files/list-anchors.ts';
import type { Anchor } from '../../../server/modules/files/list-anchors-store.ts';
import { newId } from '../../../server/lib/ids.ts';

type Sort = Parameters<typeof orderOf>[0];
interface Row {
  key: number;
  id: string;
}

/** A seeded generator, so a failing case can be run again. */
function random(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

function comparator(sort: Sort): (a: Row, b: Row) => number {
  const [[, keyDirection], [, idDirection]] = orderOf(sort) as [[string, 'asc' | 'desc'], [string, 'asc' | 'desc']];
  return (a, b) => {
    if (a.key !== b.key) return (a.key < b.key) === (keyDirection === 'asc') ? -1 : 1;
    if (a.id === b.id) return 0;
    return (a.id < b.id) === (idDirection === 'asc') ? -1 : 1;
  };
}

/**
 * A list, files coming and going as the log records them, and the anchors the list would have
 * after: the rows the carried anchors name, at the places those rows hold in the changed list.
 */
function scenario(sort: Sort, seed: number) {
  const next = random(seed);
  const order = comparator(sort);
  const row = (): Row => ({ key: Math.floor(next() * 50), id: newId() });
  let list = Array.from({ length: 400 + Math.floor(next() * 400) }, row).sort(order);
  const stride = 10;
  const anchors: Anchor[] = list.flatMap((r, pos) => ((pos + 1) % stride === 0 ? [{ ...r, pos }] : []));
  const entries: Change[] = [];
  const removed = new Set<string>();
  for (let i = 0; i < 300; i++) {
    if (next() < 0.5 && list.length > 0) {
      // Anchored rows go more often than their share, so deleted anchors are well covered.
      const pick = next() < 0.3 ? anchors[Math.floor(next() * anchors.length)]! : list[Math.floor(next() * list.length)]!;
      if (!list.some((r) => r.id === pick.id)) continue;
      list = list.filter((r) => r.id !== pick.id);
      removed.add(pick.id);
      entries.push({ ...pick, delta: -1 });
    } else {
      const added = row();
      list = [...list, added].sort(order);
      entries.push({ ...added, delta: 1 });
    }
  }
  const expected = anchors.filter((a) => !removed.has(a.id)).map((a) => ({ key: a.key, id: a.id, pos: list.findIndex((r) => r.id === a.id) }));
  return { anchors, entries, expected };
}

/** server/modules/files/list-anchors.ts: the anchors a process carries through the log instead of walking the list again. */
describe('anchors carried through the log of changes', () => {
  for (const sort of ['newest', 'oldest', 'largest', 'smallest'] as const) {
    it(`stand at the places their rows hold after every change, deleted anchors taken away (${sort})`, () => {
      for (let seed = 1; seed <= 40; seed++) {
        const { anchors, entries, expected } = scenario(sort, seed);
        const before = anchors.map((a) => ({ ...a }));
        expect(carriedAnchors(sort, anchors, entries), `seed ${seed}`).toEqual(expected);
        // The anchors carried from are left as they were: other requests may still page by them.
        expect(anchors).toEqual(before);
      }
    });
  }

  it('gives up when a file comes with the id of an anchor still in place (the log and the anchors disagree)', () => {
    const anchors: Anchor[] = [
      { key: 5, id: 'aa', pos: 9 },
      { key: 3, id: 'bb', pos: 19 },
    ];
    expect(carriedAnchors('newest', anchors, [{ key: 3, id: 'bb', delta: 1 }])).toBeNull();
    // Once that anchor's file went, the same id coming back is a new file like any other.
    expect(
      carriedAnchors('newest', anchors, [
        { key: 3, id: 'bb', delta: -1 },
        { key: 3, id: 'bb', delta: 1 },
      ]),
    ).toEqual([{ key: 5, id: 'aa', pos: 9 }]);
  });

  it('gives up when only the database can order two rows (ids not of the server’s form)', () => {
    const anchors: Anchor[] = [{ key: 5, id: 'Zed', pos: 9 }];
    expect(carriedAnchors('newest', anchors, [{ key: 5, id: 'abc', delta: 1 }])).toBeNull();
  });
});
