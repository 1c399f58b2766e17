import { setImmediate as nextTurn } from 'node:timers/promises';
import { PostgresAdapter, sql, type RawBuilder } from 'kysely';
import type { Database } from '../../db/index.ts';
import type { FileSort } from '../../../contract/files.ts';
import { loadAnchors, saveAnchors, type Anchor, type StoredAnchors } from './list-anchors-store.ts';

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
 *
 * A change does not cost a walk: the counting triggers log each file that came or went
 * (migration 2026-11-29-10), and anchors read at counter c are carried to a later counter by
 * the log's entries after c — each moves the anchors after its row by one place, and takes away
 * an anchor it deletes. Anchors then sit at any place, not only every STRIDE-th, so each keeps
 * its place. The list is walked again when the log cannot tell (entries pruned, a sort-key
 * update, a tie only the database's collation can order), when more than STRIDE changes came
 * since the anchors at hand, or when a gap between anchors grows past MAX_GAP.
 *
 * Anchors are also kept in the database (list-anchors-store.ts) after each walk and every
 * KEEP_EVERY carried changes: a process that has none for a list — just started, or one of
 * many — carries those forward instead of walking.
 *
 * The request that starts a walk does not wait for it: a walk steps about four times slower than
 * the offset query to the same depth (a statement per anchor or per slice of anchors), so that
 * request runs the offset query while the walk goes on. Requests that come while it runs wait
 * until it passes their page, in slices they share, rather than each adding an offset query
 * that would hold the walk back (SQLite's driver runs one statement at a time).
 */
export const STRIDE = 1000;
/** Anchors read per slice of a walk; between slices other requests run (SQLite's driver is synchronous). */
const SLICE = 20;
/** Carried changes after which a process keeps its anchors for the others (a write of ~40 KB per million files). */
export const KEEP_EVERY = STRIDE / 4;
/**
 * Rows a page may step over from its anchor once changes were carried: a deleted anchor joins
 * two gaps (2 × STRIDE, plus what came between); several deleted close together walk the list
 * again. Stepping over an index entry costs well under a microsecond, so 4,000 stay cheap.
 */
const MAX_GAP = 4 * STRIDE;
/** Lists (owner × sort) whose anchors a process keeps, least recently used dropped first: ≤ 1,000 anchors each per million files. */
const MAX_LISTS = 64;

type Sort = NonNullable<FileSort>;
const SORTS: readonly Sort[] = ['newest', 'oldest', 'largest', 'smallest'];
type OrderColumn = 'files.time_created' | 'files.size' | 'files.id';
type OrderTerm = [OrderColumn, 'asc' | 'desc'];

/** An owner's list (`userId`) or every file (the admin list), in one order; no name filter. */
export interface AnchoredList {
  userId?: string;
  sort: Sort;
}

interface Row {
  key: number;
  id: string;
}

interface Build {
  changes: number;
  /** In list order; a walk reads the rows at places (j + 1) × STRIDE − 1, carrying moves them. */
  anchors: Anchor[];
  /** Every anchor of the list at `changes` (the walk ended): the log can carry them forward. */
  complete: boolean;
  /** No more anchors will come (the walk ended, or the anchors were carried or loaded whole). */
  done: boolean;
  /** Resolves when the walk has read its next slice, or ended. */
  progressed: Promise<void>;
  wake: () => void;
  /** The counter at which these anchors or their forebears were last kept in the database. */
  keptAt: number | null;
  /** The carry to a later counter under way, shared by the requests that need it. */
  next?: { changes: number; build: Promise<Build | null> };
}

/** The list's order; the id breaks ties so pages never repeat or skip a file between requests. */
export function orderOf(sort: Sort): OrderTerm[] {
  if (sort === 'oldest') return [['files.time_created', 'asc'], ['files.id', 'asc']];
  if (sort === 'largest') return [['files.size', 'desc'], ['files.id', 'asc']];
  if (sort === 'smallest') return [['files.size', 'asc'], ['files.id', 'asc']];
  return [['files.time_created', 'desc'], ['files.id', 'desc']];
}

/** The column an anchor's `key` holds: the list's first order term. */
function keyColumnOf(sort: Sort): OrderColumn {
  return (orderOf(sort) as [OrderTerm])[0][0];
}

/** Rows at (or, `strict`, after) the anchor in the list's order, as a range the sort index answers. */
function fromAnchor(sort: Sort, a: Row, strict: boolean): RawBuilder<boolean> {
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
const walks = new WeakMap<Database, number>();

/** Walks started by this process on `db` (diagnostics, and the tests' proof that a change was carried, not walked). */
export function anchorWalks(db: Database): number {
  return walks.get(db) ?? 0;
}

/**
 * The ids of the page at `offset` read from the nearest anchor, for the caller to use as the
 * page's `files.id in (…)`; null when anchors cannot answer (a short list, or anchors not yet
 * read that far), and then the caller runs the offset query. An empty answer from the query
 * means the list changed since `changes` was read: the caller runs the offset query too.
 * `total` is the list's count at `changes`.
 */
export async function anchoredPageIds(db: Database, list: AnchoredList, changes: number, total: number, offset: number, pageSize: number) {
  if (offset < STRIDE - 1) return null;
  const found = await buildFor(db, list, changes, total);
  if (!found) return null;
  const { build, started } = found;
  // Waiting costs this request no more than its own offset query would (see above).
  while (!started && !build.done && (build.anchors.at(-1)?.pos ?? -1) + STRIDE <= offset) await build.progressed;
  const anchor = nearest(build.anchors, offset);
  if (!anchor) return null;
  const ids = listed(db, list).select('files.id').where(fromAnchor(list.sort, anchor, false)).where(unchanged(list, changes));
  return ordered(ids, list.sort)
    .limit(pageSize)
    .offset(offset - anchor.pos);
}

/** The last anchor at or before `offset`. */
function nearest(anchors: Anchor[], offset: number): Anchor | undefined {
  let lo = 0;
  let hi = anchors.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (anchors[mid]!.pos <= offset) lo = mid + 1;
    else hi = mid;
  }
  return anchors[lo - 1];
}

/**
 * The list's anchors at `changes`: kept, carried forward from older ones, or a walk started
 * (`started`: by this request); null when this request read an older counter than the build.
 */
async function buildFor(db: Database, list: AnchoredList, changes: number, total: number): Promise<{ build: Build; started: boolean } | null> {
  const found = (build: Build) => ({ build, started: false });
  const lists = listsOf(db);
  const key = keyOf(list);
  const known = lists.get(key);
  if (known && known.changes > changes) return null;
  if (known && known.changes === changes) return found(kept(lists, key, known));
  const next = (known && (await carriedFrom(db, list, known, changes, total))) ?? (await carriedFromStore(db, list, key, known, changes, total));
  // Other requests may have kept later anchors, or started a walk, meanwhile.
  const now = lists.get(key);
  if (next) {
    if (next.keptAt === null || next.changes - next.keptAt >= KEEP_EVERY) {
      next.keptAt = next.changes;
      void saveAnchors(db, key, list.userId, next.changes, next.anchors);
    }
    return found(now && now.changes >= next.changes ? next : kept(lists, key, next));
  }
  if (now && now.changes > changes) return null;
  if (now && now.changes === changes) return found(kept(lists, key, now));
  const build = walking(changes);
  kept(lists, key, build);
  walks.set(db, anchorWalks(db) + 1);
  void walk(db, list, build, total, () => lists.get(key) === build).then(() => {
    if (!build.complete || build.anchors.length === 0) return;
    build.keptAt = build.changes;
    return saveAnchors(db, key, list.userId, build.changes, build.anchors);
  });
  return { build, started: true };
}

/** This process's anchors for the lists of `db`, by list key. */
function listsOf(db: Database): Map<string, Build> {
  let lists = builds.get(db);
  if (!lists) builds.set(db, (lists = new Map()));
  return lists;
}

/** The key a list's anchors go by, in a process and in the database (text: no NUL); owner ids are hex, so ':' is unambiguous. */
function keyOf(list: AnchoredList): string {
  return `${list.userId ?? '*'}:${list.sort}`;
}

/** The list a key names; null for a key this code did not make. */
export function listOfKey(key: string): AnchoredList | null {
  const at = key.lastIndexOf(':');
  const owner = key.slice(0, at);
  const sort = key.slice(at + 1);
  const known = SORTS.find((s) => s === sort);
  if (at < 1 || !known) return null;
  return owner === '*' ? { sort: known } : { userId: owner, sort: known };
}

/**
 * Takes another process's kept anchors (`stored`) as this process's own for `list`, carried to
 * the list's counter `changes` (count `total`); false when they are newer than it or cannot be
 * carried. For the start: the first deep page then reads and carries nothing.
 */
export async function adoptKeptAnchors(db: Database, list: AnchoredList, stored: StoredAnchors, changes: number, total: number): Promise<boolean> {
  const build = await carriedStored(db, list, stored, changes, total);
  if (!build) return false;
  const lists = listsOf(db);
  const key = keyOf(list);
  const known = lists.get(key);
  if (!known || known.changes < build.changes) kept(lists, key, build);
  return true;
}

/** Anchors whole from the start (carried or loaded). */
function whole(changes: number, anchors: Anchor[], keptAt: number | null): Build {
  return { changes, anchors, complete: true, keptAt, done: true, progressed: Promise.resolve(), wake: () => {} };
}

/** Anchors a walk is about to read. */
function walking(changes: number): Build {
  const build: Build = { changes, anchors: [], complete: false, keptAt: null, done: false, progressed: Promise.resolve(), wake: () => {} };
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

/** `from` carried to `changes`, one carry per target shared by the requests that need it; null when it cannot be. */
function carriedFrom(db: Database, list: AnchoredList, from: Build, changes: number, total: number): Promise<Build | null> {
  if (!from.complete) return Promise.resolve(null);
  if (from.next?.changes !== changes) from.next = { changes, build: carried(db, list, from, changes, total) };
  return from.next.build;
}

/** The anchors another process's walk kept, carried to `changes`; null when there are none newer than this process's own, or they cannot be carried. */
async function carriedFromStore(db: Database, list: AnchoredList, key: string, known: Build | undefined, changes: number, total: number): Promise<Build | null> {
  const stored = await loadAnchors(db, key).catch(() => null);
  if (!stored || (known?.complete && stored.changes <= known.changes)) return null;
  return carriedStored(db, list, stored, changes, total);
}

/** Kept anchors (`stored`) carried to `changes`; null when they are newer than it or cannot be carried. */
function carriedStored(db: Database, list: AnchoredList, stored: StoredAnchors, changes: number, total: number): Promise<Build | null> {
  if (stored.changes > changes) return Promise.resolve(null);
  const walked = whole(stored.changes, stored.anchors, stored.changes);
  return stored.changes === changes ? Promise.resolve(walked) : carried(db, list, walked, changes, total);
}

/** Keeps `build` as the list's anchors, least recently used last out. */
function kept(lists: Map<string, Build>, key: string, build: Build): Build {
  lists.delete(key);
  lists.set(key, build);
  if (lists.size > MAX_LISTS) lists.delete(lists.keys().next().value as string);
  return build;
}

export interface Change extends Row {
  delta: number;
}

/** `from`'s anchors moved by the log's entries up to `changes`; null when the log cannot tell where they now stand. */
async function carried(db: Database, list: AnchoredList, from: Build, changes: number, total: number): Promise<Build | null> {
  // A list seen again after this many changes is walked: it bounds a request's work here (the
  // entries read, each moving up to every anchor) and how far gaps can have drifted.
  if (changes - from.changes > STRIDE) return null;
  const entries = await logged(db, list, from.changes, changes).catch(() => null);
  // Fewer entries than the counter moved: pruned, or a change that logs nothing (a re-keyed file).
  if (!entries || entries.length !== changes - from.changes) return null;
  const anchors = carriedAnchors(list.sort, from.anchors, entries);
  if (!anchors || widestGap(anchors, total) > MAX_GAP) return null;
  return whole(changes, anchors, from.keptAt);
}

/** The files that came (delta 1) or went (−1) in the list after counter `after`, up to `upTo`, in order. */
async function logged(db: Database, list: AnchoredList, after: number, upTo: number): Promise<Change[]> {
  const counter = list.userId === undefined ? 'changes' : 'user_changes';
  let query = db.selectFrom('file_list_log').select(['file_id', 'size', 'time_created', 'delta']).where(counter, '>', after).where(counter, '<=', upTo);
  if (list.userId !== undefined) query = query.where('user_id', '=', list.userId);
  const rows = await query.orderBy(counter).execute();
  const byTime = keyColumnOf(list.sort) === 'files.time_created';
  return rows.map((r) => ({ key: Number(byTime ? r.time_created : r.size), id: r.file_id, delta: Number(r.delta) }));
}

/**
 * `anchors` (in list order) after the log's `entries`, in the order they were logged: each moves
 * the anchors after its row by its delta and takes away the anchor it deletes. Null when the
 * order cannot be told. The moves are summed in one pass at the end rather than applied entry by
 * entry: a process just started may carry hundreds of entries over a thousand anchors before
 * V8 has optimised any of it (entry by entry, 6–14 ms of a fresh process's first deep page
 * after 204 uploads; bench/README.md).
 */
export function carriedAnchors(sort: Sort, anchors: readonly Anchor[], entries: readonly Change[]): Anchor[] | null {
  // shift[i]: what the anchors from i on move by; a deleted anchor stays in place to search by.
  const shift = new Array<number>(anchors.length + 1).fill(0);
  const gone = new Array<boolean>(anchors.length).fill(false);
  for (const change of entries) {
    // The first anchor not before the changed row.
    let lo = 0;
    let hi = anchors.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      const c = compare(sort, anchors[mid]!, change);
      if (c === null) return null;
      if (c < 0) lo = mid + 1;
      else hi = mid;
    }
    if (anchors[lo]?.id === change.id && !gone[lo]) {
      // An anchor can only go; a file coming with an anchor's id means the log and the anchors disagree.
      if (change.delta > 0) return null;
      gone[lo] = true;
    }
    shift[lo]! += change.delta;
  }
  const out: Anchor[] = [];
  let by = 0;
  for (let i = 0; i < anchors.length; i++) {
    by += shift[i]!;
    if (!gone[i]) out.push({ ...anchors[i]!, pos: anchors[i]!.pos + by });
  }
  return out;
}

/**
 * Record ids are lowercase hex of one length (server/lib/ids.ts): every collation orders two
 * of them as their bytes, as JavaScript does. Other ids only the database can order.
 */
const COMPARABLE_ID = /^[0-9a-f]+$/;

/** Negative when `a` comes before `b` in the list's order, positive after, 0 for the same row; null when only the database can tell. */
function compare(sort: Sort, a: Row, b: Row): number | null {
  if (a.id === b.id) return 0;
  // The directions orderOf gives the database, so both order alike.
  const [[, keyDirection], [, idDirection]] = orderOf(sort) as [OrderTerm, OrderTerm];
  if (a.key !== b.key) return (a.key < b.key) === (keyDirection === 'asc') ? -1 : 1;
  if (a.id.length !== b.id.length || !COMPARABLE_ID.test(a.id) || !COMPARABLE_ID.test(b.id)) return null;
  return (a.id < b.id) === (idDirection === 'asc') ? -1 : 1;
}

/** The most rows a page may have to step over from its nearest anchor (or before the first, through the offset query). */
function widestGap(anchors: Anchor[], total: number): number {
  let widest = 0;
  let previous = -1;
  for (const a of anchors) {
    widest = Math.max(widest, a.pos - previous);
    previous = a.pos;
  }
  return Math.max(widest, total - previous);
}

/** Reads the anchors slice by slice until the list ends, the counter moves on, or the build is replaced. */
async function walk(db: Database, list: AnchoredList, build: Build, total: number, current: () => boolean): Promise<void> {
  try {
    while (current()) {
      const next = await slice(db, list, build.changes, build.anchors.at(-1) ?? null);
      for (const row of next) build.anchors.push({ ...row, pos: (build.anchors.length + 1) * STRIDE - 1 });
      // Fewer than asked: the end of the list, or the list changed (the next request starts anew).
      if (next.length < SLICE) break;
      build.wake();
      await nextTurn();
    }
    // Every slice checked the counter: all anchors of the list at `changes`, or fewer.
    build.complete = build.anchors.length === Math.floor(total / STRIDE);
  } catch {
    // The database went away (shutdown) or failed: requests fall back to the offset query.
  } finally {
    build.done = true;
    build.wake();
  }
}

async function slice(db: Database, list: AnchoredList, changes: number, after: Row | null): Promise<Row[]> {
  const keyColumn = keyColumnOf(list.sort);
  const rows = (from: Row | null) => {
    const q = listed(db, list).where(unchanged(list, changes));
    return from ? q.where(fromAnchor(list.sort, from, true)) : q;
  };
  const anchors: Row[] = [];
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
