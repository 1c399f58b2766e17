import { setImmediate as nextTurn } from 'node:timers/promises';
import { PostgresAdapter, sql, type RawBuilder } from 'kysely';
import type { Database } from '../../db/index.ts';
import type { FileSort } from '../../../contract/files.ts';

/**
 * Issue 9, deep pages at a million files. The API pages by number (spec §7), so page 83,333
 * is `offset 499,992`, and B-trees keep no subtree counts: the offset query steps over every
 * index entry before the page (30–80 ms at 1M files, bench/). Instead, each process keeps the
 * sort key and id of every STRIDE-th row of a list — its anchors — read once by a walk of the
 * list's index, and a deep page seeks to the nearest anchor (`(key, id) <= anchor`, an index
 * range) and steps over fewer than STRIDE entries from there.
 *
 * Anchors belong to one value of the list's `changes` counter (migration 2026-11-25-10), and
 * every statement that reads or uses them checks that value in the same statement: if any file
 * of the list was added, removed or re-keyed since, the statement answers no rows and the
 * caller runs the plain offset query. So an anchored page is always the page the offset query
 * would have given at that moment.
 */
export const STRIDE = 1000;
/** Anchors read per slice of a build; between slices other requests run (SQLite's driver is synchronous). */
const SLICE = 20;
/** Lists (owner × sort) whose anchors a process keeps, least recently used dropped first: ≤ 1,000 anchors each per million files. */
const MAX_LISTS = 64;

type Sort = NonNullable<FileSort>;
type OrderColumn = 'files.time_created' | 'files.size' | 'files.id';
type OrderTerm = [OrderColumn, 'asc' | 'desc'];

/** An owner's list (`userId`) or every file (the admin list), in one order; no name filter. */
export interface AnchoredList {
  userId?: string;
  sort: Sort;
}

interface Anchor {
  key: number;
  id: string;
}

interface Build {
  changes: number;
  /** anchors[j] is the row at position (j + 1) × STRIDE − 1 of the list (0-based). */
  anchors: Anchor[];
  done: boolean;
  /** Resolves when the next slice has been read (or the build ends). */
  progressed: Promise<void>;
  wake: () => void;
}

/** The list's order; the id breaks ties so pages never repeat or skip a file between requests. */
export function orderOf(sort: Sort): OrderTerm[] {
  if (sort === 'oldest') return [['files.time_created', 'asc'], ['files.id', 'asc']];
  if (sort === 'largest') return [['files.size', 'desc'], ['files.id', 'asc']];
  if (sort === 'smallest') return [['files.size', 'asc'], ['files.id', 'asc']];
  return [['files.time_created', 'desc'], ['files.id', 'desc']];
}

/** Rows at (or, `strict`, after) the anchor in the list's order, as a range the sort index answers. */
function fromAnchor(sort: Sort, a: Anchor, strict: boolean): RawBuilder<boolean> {
  const eq = strict ? '' : '=';
  if (sort === 'largest') {
    // Size descending, id ascending: no single row comparison; the size bound is the index range
    // and only the ties at the anchor's size are filtered.
    return sql<boolean>`files.size <= ${a.key} and (files.size < ${a.key} or files.id >${sql.raw(eq)} ${a.id})`;
  }
  const [[column, direction]] = orderOf(sort) as [OrderTerm];
  const op = direction === 'desc' ? `<${eq}` : `>${eq}`;
  return sql<boolean>`(${sql.ref(column)}, files.id) ${sql.raw(op)} (${a.key}, ${a.id})`;
}

/** True only while the list's `changes` counter still holds the value the anchors were read at. */
function unchanged(list: AnchoredList, changes: number): RawBuilder<boolean> {
  return list.userId === undefined
    ? sql<boolean>`(select changes from file_totals where id = 1) = ${changes}`
    : sql<boolean>`(select changes from file_counts where user_id = ${list.userId}) = ${changes}`;
}

function listed(db: Database, list: AnchoredList) {
  const query = db.selectFrom('files');
  return list.userId === undefined ? query : query.where('files.user_id', '=', list.userId);
}

function ordered<T extends { orderBy: (column: OrderColumn, direction: 'asc' | 'desc') => T }>(query: T, sort: Sort): T {
  for (const [column, direction] of orderOf(sort)) query = query.orderBy(column, direction);
  return query;
}

const builds = new WeakMap<Database, Map<string, Build>>();

/**
 * The ids of the page at `offset` read from the nearest anchor, for the caller to use as the
 * page's `files.id in (…)`; null when anchors cannot answer (a short list, or anchors not yet
 * read that far), and then the caller runs the offset query. An empty answer from the query
 * means the list changed since `changes` was read: the caller runs the offset query too.
 */
export async function anchoredPageIds(db: Database, list: AnchoredList, changes: number, offset: number, pageSize: number) {
  const j = Math.floor((offset + 1) / STRIDE);
  if (j < 1) return null;
  const build = buildFor(db, list, changes);
  if (!build) return null;
  // The request waits only while the walk is short of its page: never longer than its own
  // offset query would have walked, and in slices other requests share.
  while (build.anchors.length < j && !build.done) await build.progressed;
  const anchor = build.anchors[j - 1];
  if (!anchor) return null;
  const ids = listed(db, list).select('files.id').where(fromAnchor(list.sort, anchor, false)).where(unchanged(list, changes));
  return ordered(ids, list.sort)
    .limit(pageSize)
    .offset(offset - (j * STRIDE - 1));
}

/** The list's anchors at `changes`, started when missing or older; null when this request read an older counter than the build. */
function buildFor(db: Database, list: AnchoredList, changes: number): Build | null {
  let lists = builds.get(db);
  if (!lists) builds.set(db, (lists = new Map()));
  const key = `${list.userId ?? '*'}\u0000${list.sort}`;
  const known = lists.get(key);
  if (known && known.changes > changes) return null;
  const build = known && known.changes === changes ? known : newBuild(changes);
  // Least recently used last out.
  lists.delete(key);
  lists.set(key, build);
  if (lists.size > MAX_LISTS) lists.delete(lists.keys().next().value as string);
  if (build !== known) void walk(db, list, build, () => lists.get(key) === build);
  return build;
}

function newBuild(changes: number): Build {
  const build: Build = { changes, anchors: [], done: false, progressed: Promise.resolve(), wake: () => {} };
  const arm = () => {
    build.progressed = new Promise((resolve) => {
      build.wake = () => {
        arm();
        resolve();
      };
    });
  };
  arm();
  return build;
}

/** Reads the anchors slice by slice until the list ends, the counter moves on, or the build is replaced. */
async function walk(db: Database, list: AnchoredList, build: Build, current: () => boolean): Promise<void> {
  try {
    while (current()) {
      const next = await slice(db, list, build.changes, build.anchors.at(-1) ?? null);
      build.anchors.push(...next);
      // Fewer than asked: the end of the list, or the list changed (the next request starts anew).
      if (next.length < SLICE) break;
      build.wake();
      await nextTurn();
    }
  } catch {
    // The database went away (shutdown) or failed: requests fall back to the offset query.
  } finally {
    build.done = true;
    build.wake();
  }
}

async function slice(db: Database, list: AnchoredList, changes: number, after: Anchor | null): Promise<Anchor[]> {
  const keyColumn = list.sort === 'newest' || list.sort === 'oldest' ? 'files.time_created' : 'files.size';
  const rows = (from: Anchor | null) => {
    const q = listed(db, list).where(unchanged(list, changes));
    return from ? q.where(fromAnchor(list.sort, from, true)) : q;
  };
  const anchors: Anchor[] = [];
  if (db.getExecutor().adapter instanceof PostgresAdapter) {
    // One statement per slice (a round trip per anchor would cost more than the walk): the
    // window counts rows as the index scan streams them, the limit ends the scan.
    const order = sql.join(orderOf(list.sort).map(([column, direction]) => sql`${sql.ref(column)} ${sql.raw(direction)}`));
    const walked = ordered(
      rows(after).select([sql<number>`${sql.ref(keyColumn)}`.as('key'), 'files.id', sql<number>`row_number() over (order by ${order})`.as('n')]),
      list.sort,
    ).limit(STRIDE * SLICE);
    const found = await db.selectFrom(walked.as('w')).select(['w.key', 'w.id']).where(sql<boolean>`w.n % ${STRIDE} = 0`).orderBy('w.n').execute();
    for (const r of found) anchors.push({ key: Number(r.key), id: r.id });
    return anchors;
  }
  // SQLite materialises a window over the whole list, so one short offset step per anchor
  // instead (each ~STRIDE index entries, tens of microseconds).
  for (let from = after; anchors.length < SLICE; ) {
    const r = await ordered(rows(from).select([sql<number>`${sql.ref(keyColumn)}`.as('key'), 'files.id']), list.sort)
      .limit(1)
      .offset(STRIDE - 1)
      .executeTakeFirst();
    if (!r) break;
    from = { key: Number(r.key), id: r.id };
    anchors.push(from);
  }
  return anchors;
}
