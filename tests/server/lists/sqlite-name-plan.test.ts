import { describe, expect, it } from 'vitest';
import { countRead, LOOKUP_COST, pageRead, trigramCandidatesWorth } from '../../../server/modules/files/sqlite-name-plan.ts';

/**
 * Issue 9, name filters on SQLite at a million files: a lookup per row through an index or the
 * trigram table costs ~15 rows of a scan of the table, so past that the list scans. A wrong
 * choice is not a wrong answer but seconds on the event loop (bench/README.md "Lists").
 */
describe('how a name-filtered list is read on SQLite', () => {
  const site = 1_000_000;

  it('leaves the trigram table once its candidates would cost more than a scan', () => {
    expect(trigramCandidatesWorth(site)).toBe(Math.ceil(site / LOOKUP_COST));
    // An empty site still looks for one candidate (a limit of 0 would read none and always scan).
    expect(trigramCandidatesWorth(0)).toBe(1);
  });

  it('counts by a scan when the owner holds much of the site, through the index when little', () => {
    expect(countRead(site, site)).toBe('scan');
    expect(countRead(site / 10, site)).toBe('scan');
    expect(countRead(site / 20, site)).toBe('index');
    expect(countRead(0, site)).toBe('index');
  });

  it('walks the sort index for a page its matches reach soon, and scans for one they reach late', () => {
    // "1" in half the names: page 1 is the first dozen rows of the index.
    expect(pageRead(site, site, site / 2, 0, 6)).toBe('index');
    expect(pageRead(site, site, site / 2, 12_000, 6)).toBe('index');
    // A few dozen matches: six of them are a fifth of the owner's rows away on average.
    expect(pageRead(site, site, 30, 0, 6)).toBe('scan');
    // No match at all: the walk reads every row.
    expect(pageRead(site, site, 0, 0, 6)).toBe('scan');
    // The same few matches of a small owner: the index, however far it walks.
    expect(pageRead(1_000, site, 3, 0, 6)).toBe('index');
    // Deep in a list of dense matches: the walk passes a scan's cost.
    expect(pageRead(site, site, site / 2, 400_000, 6)).toBe('scan');
  });
});
