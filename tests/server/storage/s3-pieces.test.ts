import { describe, expect, it } from 'vitest';
import { cover, coveredBytes, planParts, type Piece } from '../../../server/storage/s3-pieces.ts';

/** The S3 driver's layout rules (server/README.md "S3 storage"), without a store. */
const piece = (start: number, size: number): Piece => ({ name: `p${start}`, start, size });
const MiB = 1024 * 1024;

describe('S3 piece layout', () => {
  it('covers a range contiguously and stops at the first gap', () => {
    const pieces = [piece(0, 8), piece(8, 8), piece(20, 4)];
    expect(coveredBytes(cover(pieces, 0, 24))).toBe(16);
    expect(coveredBytes(cover(pieces, 20, 24))).toBe(4);
    expect(coveredBytes(cover(pieces, 4, 10))).toBe(6);
  });

  it('lets the piece that starts last win where pieces overlap (a write resumed earlier)', () => {
    const segments = cover([piece(0, 10), piece(4, 3)], 0, 10);
    expect(segments.map((s) => [s.piece.start, s.from, s.to])).toEqual([
      [0, 0, 4],
      [4, 4, 7],
      [0, 7, 10],
    ]);
  });

  it('copies pieces of at least 5 MiB inside the store and joins smaller runs into one part', () => {
    const big = cover([piece(0, 8 * MiB), piece(8 * MiB, 8 * MiB), piece(16 * MiB, MiB)], 0, 17 * MiB);
    expect(planParts(big, 5 * MiB).map((p) => p.kind)).toEqual(['copy', 'copy', 'concat']);
    const small = cover(
      Array.from({ length: 12 }, (_, i) => piece(i * MiB, MiB)),
      0,
      12 * MiB,
    );
    const plan = planParts(small, 5 * MiB);
    expect(plan.map((p) => (p.kind === 'concat' ? p.size : -1))).toEqual([5 * MiB, 5 * MiB, 2 * MiB]);
  });
});
