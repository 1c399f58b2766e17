/**
 * SQLite, a name filter. The FTS5 trigram table finds the candidates of a needle of 3 characters
 * or more, and each candidate is then a lookup into `files`; a needle of 1–2 characters it cannot
 * narrow at all, and the rows are read through one of the owner's indexes instead, a lookup per
 * row in that index's order. Either way a lookup costs about what reading 15 rows of the table in
 * the order it is stored does: on 1,000,000 files, counting the matches of "x" through the size
 * index took 5.0 s and of "png" (40 % of the names) through the trigram table 4.3 s, against
 * 0.33 s for a scan of the whole table (2026-12-02, bench/README.md "Lists") — and better-sqlite3
 * runs a statement on the event loop, so every other request waits as long. SQLite's planner
 * cannot tell how many rows a `like '%…%'` keeps; the kept counts and a bounded look at the
 * trigram table can, so these choose whichever reads less.
 */

/** How a name-filtered list's rows are read: the trigram table's candidates, the sort's index, or the table in stored order. */
export type NameRead = 'trigrams' | 'index' | 'scan';

/** Rows of the table read in stored order for the cost of one row read through an index (measured above). */
export const LOOKUP_COST = 15;

/** The most trigram candidates worth a lookup each: past it, a scan of the site's `site` rows reads less. */
export function trigramCandidatesWorth(site: number): number {
  return Math.max(1, Math.ceil(site / LOOKUP_COST));
}

/** The count without the trigram table: scan the table when reading the owner's `owner` rows through an index would cost more. */
export function countRead(owner: number, site: number): NameRead {
  return owner * LOOKUP_COST > site ? 'scan' : 'index';
}

/**
 * The page without the trigram table: the sort's index walk reads (offset + pageSize) × owner /
 * matches rows on average before its page is whole (every row when the matches are few); past
 * the cost of a scan, scan the table and sort the matches instead.
 */
export function pageRead(owner: number, site: number, matches: number, offset: number, pageSize: number): NameRead {
  const walked = matches > 0 ? Math.min(owner, Math.ceil(((offset + pageSize) * owner) / matches)) : owner;
  return walked * LOOKUP_COST > site ? 'scan' : 'index';
}
