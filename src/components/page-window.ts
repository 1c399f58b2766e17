import { PAGINATION_ALL_PAGES_MAX } from '../lib/constants.ts';

export type PageSlot = number | 'ellipsis-start' | 'ellipsis-end';

/**
 * Spec §9: every page when there are 5 or fewer; otherwise the first and last page, the current
 * page with one neighbour each side, and an ellipsis for each gap that hides pages.
 */
export function pageWindow(page: number, totalPages: number): PageSlot[] {
  if (totalPages <= PAGINATION_ALL_PAGES_MAX) return Array.from({ length: totalPages }, (_, i) => i + 1);
  const current = Math.min(Math.max(page, 1), totalPages);
  // Near an edge show three pages there, so the window never shrinks below five slots of numbers.
  let start = Math.max(2, current - 1);
  let end = Math.min(totalPages - 1, current + 1);
  if (current <= 3) end = 4;
  if (current >= totalPages - 2) start = totalPages - 3;
  const slots: PageSlot[] = [1];
  if (start > 2) slots.push('ellipsis-start');
  for (let p = start; p <= end; p++) slots.push(p);
  if (end < totalPages - 1) slots.push('ellipsis-end');
  slots.push(totalPages);
  return slots;
}

/** Spec §5: Go to page takes an integer from 1 to the last page; anything else is refused. */
export function parsePageNumber(input: string, totalPages: number): number | null {
  const text = input.trim();
  if (!/^\d+$/.test(text)) return null;
  const n = Number(text);
  return n >= 1 && n <= totalPages ? n : null;
}
