import { sql, type RawBuilder } from 'kysely';
import type { Database } from '../../db/index.ts';

/**
 * Issue 9, the name filter on PostgreSQL. pg_trgm's GIN index answers `like '%needle%'` by
 * intersecting the posting lists of every trigram of the needle, and reads each list whole: in
 * "holiday-4321" the six trigrams of "holiday" are in a fifth of a million names each, and
 * reading them was 90 % of the filter's time (8 ms of 9, EXPLAIN ANALYZE at 1,000,000 files)
 * while narrowing nothing the rare "4321" had not. So the index is asked only for the needle's
 * pieces made of trigrams that are not common, and the whole needle is then checked on the few
 * rows found (`strpos`, which no index serves, so the planner keeps it as a filter). The answer
 * is the same rows; only the reading changes.
 *
 * Which trigrams are common comes from the sample PostgreSQL's ANALYZE already keeps for each
 * trigram index's expression (`pg_stats`: most common values and histogram bounds of
 * `lower(name)`), so it follows the site's real names and costs one small query every few minutes.
 */

/** A name of the statistics' sample and the share of all rows it stands for. */
export interface SampledName {
  name: string;
  weight: number;
}

/** The sample of each indexed name column. */
export type NameStats = Record<'original_name' | 'actual_name', SampledName[]>;

/** A trigram found in this share of the names or more is common: its posting list is long. */
const COMMON_SHARE = 0.05;
/** How long one process keeps a sample before reading the statistics again. */
const STATS_TTL_MS = 5 * 60_000;
/**
 * How long a sample without names is kept: the statistics of a table never analyzed yet (a
 * site's start on an empty database, read before the api listens). Kept as long as the rest,
 * a site whose files were then imported asked the index for whole needles for five minutes after
 * ANALYZE had run: "holiday-4321" p50 10–17 ms against 4–7 at a million files (bench/README.md).
 * Reading no statistics costs next to nothing.
 */
export const EMPTY_STATS_TTL_MS = 10_000;
/** pg_trgm takes trigrams from runs of letters and digits; a piece without such a run of 3 gives it none to look up. */
const WORD_RUN = /[\p{L}\p{N}]{3}/u;

const INDEXES: Record<keyof NameStats, string> = { original_name: 'files_original_name_trgm', actual_name: 'files_actual_name_trgm' };
const cache = new WeakMap<Database, { at: number; keep: number; stats: Promise<NameStats> }>();

/**
 * A needle found in this share of the sample's names or more is read by a scan of the table:
 * pg_trgm's bitmap then holds most rows, and rechecking each costs more than reading them all
 * (2026-12-03, a million names, counted: "png" in 40 % 0.73–0.81 s through the index, 0.38–0.40 s
 * by a parallel scan; "holiday" in 20 % 0.58–0.75 s against 0.33–0.36 s; "123" in 0.4 % 5 ms
 * against 0.35 s).
 */
export const DENSE_SHARE = 0.1;

/** The share of the sampled names holding the (lower-cased) needle; 0 when no sample is known. */
export function sampleShare(needle: string, sample: readonly SampledName[]): number {
  const total = sample.reduce((sum, s) => sum + s.weight, 0);
  if (total === 0) return 0;
  return sample.reduce((sum, s) => (s.name.includes(needle) ? sum + s.weight : sum), 0) / total;
}

/**
 * The substrings of the (lower-cased) needle worth asking the index for, or null to ask for the
 * whole needle: when every trigram is rare (the whole needle is the best probe), when every one is
 * common (nothing better to ask), or when no sample is known yet.
 */
export function probePieces(needle: string, sample: readonly SampledName[]): string[] | null {
  const chars = [...needle];
  if (chars.length < 4 || sample.length === 0) return null;
  const total = sample.reduce((sum, s) => sum + s.weight, 0);
  const common = (gram: string) => sample.reduce((sum, s) => (s.name.includes(gram) ? sum + s.weight : sum), 0) >= COMMON_SHARE * total;
  const pieces: string[] = [];
  let start = -1;
  for (let i = 0; i <= chars.length - 3; i++) {
    const rare = !common(chars.slice(i, i + 3).join(''));
    if (rare && start < 0) start = i;
    if (!rare && start >= 0) {
      pieces.push(chars.slice(start, i + 2).join(''));
      start = -1;
    }
  }
  if (start === 0) return null;
  if (start > 0) pieces.push(chars.slice(start).join(''));
  const useful = pieces.filter((p) => WORD_RUN.test(p));
  return useful.length > 0 ? useful : null;
}

/** `lower(column)` contains `needle`, read from the trigram index through `pieces` (see above). */
export function containsThroughPieces(column: ReturnType<typeof sql.ref>, needle: string, pieces: readonly string[]): RawBuilder<boolean> {
  // The database folds both sides, as containsInsensitive (db/index.ts) does.
  const probes = pieces.map((p) => sql`lower(${column}) like lower(${`%${escapeLike(p)}%`}) escape '\\'`);
  return sql<boolean>`(${sql.join(probes, sql` and `)} and strpos(lower(${column}), lower(${needle})) > 0)`;
}

/**
 * The needle lower-cased a letter at a time, as the database folds it (toLowerCase on the whole
 * needle turns a final Σ into ς, which lower() never does), for probePieces; null when a letter
 * becomes two (İ), where its pieces might be in no name the database's lower() makes.
 */
export function lowerEachLetter(needle: string): string | null {
  const letters = [...needle].map((c) => c.toLowerCase());
  return letters.every((c) => c.length === 1 || (c.length === 2 && [...c].length === 1)) ? letters.join('') : null;
}

function escapeLike(text: string): string {
  return text.replace(/[\\%_]/g, (c) => `\\${c}`);
}

/**
 * The statistics' sample of both name columns, read at most every few minutes per process (every
 * `EMPTY_STATS_TTL_MS` while it has no names). Once one is known no request waits for the next
 * (6–12 ms at a million files): an older sample answers while a fresh one is read.
 */
export function nameStats(db: Database): Promise<NameStats> {
  const kept = cache.get(db);
  if (kept && Date.now() - kept.at < kept.keep) return kept.stats;
  const reading = readNameStats(db).catch((): NameStats => ({ original_name: [], actual_name: [] }));
  // One read at a time: until it comes, the older sample (the pending read, at first) counts as fresh.
  const answer = kept?.stats ?? reading;
  cache.set(db, { at: Date.now(), keep: STATS_TTL_MS, stats: answer });
  void reading.then((read) => {
    const named = read.original_name.length + read.actual_name.length > 0;
    cache.set(db, { at: Date.now(), keep: named ? STATS_TTL_MS : EMPTY_STATS_TTL_MS, stats: Promise.resolve(read) });
  });
  return answer;
}

interface StatsRow {
  tablename: string;
  mcv: string[] | null;
  mcf: (number | string)[] | null;
  hist: string[] | null;
}

async function readNameStats(db: Database): Promise<NameStats> {
  // anyarray columns: through text into text[], the type every sampled value here has.
  const { rows } = await sql<StatsRow>`
    select tablename, most_common_vals::text::text[] as mcv, most_common_freqs as mcf, histogram_bounds::text::text[] as hist
    from pg_stats where schemaname = current_schema() and tablename in (${INDEXES.original_name}, ${INDEXES.actual_name})`.execute(db);
  const sampleOf = (index: string): SampledName[] => {
    const row = rows.find((r) => r.tablename === index);
    if (!row) return [];
    const freqs = (row.mcf ?? []).map(Number);
    const common = (row.mcv ?? []).map((name, i) => ({ name, weight: freqs[i] ?? 0 }));
    // Histogram bounds split the rest of the rows into equal parts.
    const rest = Math.max(0, 1 - freqs.reduce((a, b) => a + b, 0));
    const hist = row.hist ?? [];
    return [...common, ...hist.map((name) => ({ name, weight: rest / hist.length }))];
  };
  return { original_name: sampleOf(INDEXES.original_name), actual_name: sampleOf(INDEXES.actual_name) };
}
