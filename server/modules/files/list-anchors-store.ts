import { sql } from 'kysely';
import type { Database } from '../../db/index.ts';

/** A row of a list (its sort key and id) and its place in the list. */
export interface Anchor {
  key: number;
  id: string;
  /** Rows before it in the list (0-based place). */
  pos: number;
}

export interface StoredAnchors {
  changes: number;
  anchors: Anchor[];
}

/**
 * The anchors of a list's last walk by any process (migration 2026-11-29-10), so a process
 * without them carries those forward instead of walking the list itself. Null when none are
 * kept or the row does not read as anchors (it is only ever a shortcut: the walk still works).
 */
export async function loadAnchors(db: Database, list: string): Promise<StoredAnchors | null> {
  const row = await db.selectFrom('file_list_anchors').select(['changes', 'anchors']).where('list', '=', list).executeTakeFirst();
  return row ? readStored(row) : null;
}

/**
 * The kept anchors of the lists with the most files (the owner's kept count; the admin list's is
 * the site's), at most `limit`, with their list keys; rows that do not read as anchors left out.
 * Ordered by the counts, not by the anchors' own size: only the chosen rows' anchors are read.
 */
export async function loadLargestAnchors(db: Database, limit: number): Promise<(StoredAnchors & { list: string })[]> {
  const largest = db
    .selectFrom('file_list_anchors as a')
    .leftJoin('file_counts as c', 'c.user_id', 'a.user_id')
    .select('a.list')
    .orderBy(sql`coalesce(c.file_count, (select file_count from file_totals where id = 1))`, 'desc')
    .limit(limit);
  const rows = await db.selectFrom('file_list_anchors').select(['list', 'changes', 'anchors']).where('list', 'in', largest).execute();
  return rows.flatMap((row) => {
    const stored = readStored(row);
    return stored ? [{ list: row.list, ...stored }] : [];
  });
}

function readStored(row: { changes: number | string | bigint; anchors: string }): StoredAnchors | null {
  let parsed: unknown;
  try {
    parsed = JSON.parse(row.anchors);
  } catch {
    return null;
  }
  if (!Array.isArray(parsed)) return null;
  const anchors: Anchor[] = [];
  for (const item of parsed as unknown[]) {
    if (!Array.isArray(item) || typeof item[0] !== 'number' || typeof item[1] !== 'string' || typeof item[2] !== 'number') return null;
    anchors.push({ key: item[0], id: item[1], pos: item[2] });
  }
  return { changes: Number(row.changes), anchors };
}

/** Keeps a walk's anchors unless a later walk's are kept already; failures only cost other processes a walk. */
export async function saveAnchors(db: Database, list: string, userId: string | undefined, changes: number, anchors: Anchor[]): Promise<void> {
  const value = JSON.stringify(anchors.map((a) => [a.key, a.id, a.pos]));
  await db
    .insertInto('file_list_anchors')
    .values({ list, user_id: userId ?? null, changes, anchors: value })
    .onConflict((oc) =>
      oc
        .column('list')
        .doUpdateSet((eb) => ({ user_id: eb.ref('excluded.user_id'), changes: eb.ref('excluded.changes'), anchors: eb.ref('excluded.anchors') }))
        .whereRef('file_list_anchors.changes', '<', 'excluded.changes'),
    )
    .execute()
    // The owner removed meanwhile (the foreign key), or the database going away at shutdown.
    .catch(() => {});
}
