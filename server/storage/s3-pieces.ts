/**
 * How the S3 driver lays out an unfinished object (server/README.md "S3 storage"): bytes live in
 * temporary "piece" objects `tmp/<key>/<start>`, each at most the piece size and never crossing
 * a chunk boundary. Pure functions here, so the layout rules are tested without a store.
 */

export interface Piece {
  /** Object key of the piece. */
  name: string;
  /** Absolute byte offset of its first byte in the unfinished object. */
  start: number;
  size: number;
}

/** A run of bytes `[from, to)` of the unfinished object, read from one piece. */
export interface Segment {
  piece: Piece;
  from: number;
  to: number;
}

const OFFSET_DIGITS = 16;

export function piecePrefix(key: string): string {
  return `tmp/${key}/`;
}

/** Zero-padded so that the store lists pieces in byte order. */
export function pieceName(key: string, start: number): string {
  return `${piecePrefix(key)}${String(start).padStart(OFFSET_DIGITS, '0')}`;
}

export function parsePiece(key: string, name: string, size: number): Piece | null {
  const prefix = piecePrefix(key);
  if (!name.startsWith(prefix)) return null;
  const rest = name.slice(prefix.length);
  if (!/^\d{16}$/.test(rest)) return null;
  return { name, start: Number(rest), size };
}

/**
 * The segments covering `[start, end)` contiguously from `start`, stopping at the first gap.
 * Where pieces overlap, the one that starts last wins: a write that resumed at an earlier
 * offset than a previous attempt reached rewrote everything from its first piece on.
 */
export function cover(pieces: readonly Piece[], start: number, end: number): Segment[] {
  const sorted = [...pieces].sort((a, b) => a.start - b.start);
  const segments: Segment[] = [];
  let pos = start;
  while (pos < end) {
    const holder = latestHolder(sorted, pos);
    if (!holder) break;
    const next = sorted.find((p) => p.start > pos);
    const nextStart = next ? next.start : Infinity;
    const to = Math.min(holder.start + holder.size, end, nextStart);
    segments.push({ piece: holder, from: pos, to });
    pos = to;
  }
  return segments;
}

function latestHolder(sorted: readonly Piece[], pos: number): Piece | null {
  let holder: Piece | null = null;
  for (const p of sorted) {
    if (p.start > pos) break;
    if (p.start + p.size > pos) holder = p;
  }
  return holder;
}

export function coveredBytes(segments: readonly Segment[]): number {
  return segments.reduce((sum, s) => sum + (s.to - s.from), 0);
}

/** One part of the final multipart upload: a server-side copy of one segment, or several segments sent as one body. */
export type PartPlan = { kind: 'copy'; segment: Segment } | { kind: 'concat'; segments: Segment[]; size: number };

/**
 * Groups segments into parts that obey S3's rule (every part but the last ≥ `minPart` bytes).
 * A segment that is large enough is copied inside the store (UploadPartCopy, no byte through
 * the server); only runs of small segments — chunks smaller than 5 MiB, or the short tails of
 * chunks whose size is not a multiple of the piece size — are read back and sent as one part.
 * With the default 80 MiB chunks and 8 MiB pieces every segment is copied.
 */
export function planParts(segments: readonly Segment[], minPart: number): PartPlan[] {
  const parts: PartPlan[] = [];
  let run: Segment[] = [];
  let runBytes = 0;
  for (const segment of segments) {
    const len = segment.to - segment.from;
    if (run.length === 0 && len >= minPart) {
      parts.push({ kind: 'copy', segment });
      continue;
    }
    run.push(segment);
    runBytes += len;
    if (runBytes >= minPart) {
      parts.push({ kind: 'concat', segments: run, size: runBytes });
      run = [];
      runBytes = 0;
    }
  }
  if (run.length > 0) parts.push({ kind: 'concat', segments: run, size: runBytes });
  return parts;
}
