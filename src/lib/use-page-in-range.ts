import { useEffect } from 'react';

/**
 * Moves a paged list back to its last page when the page shown is past the end: deleting the
 * last row of the last page (or rows deleted on another device meanwhile) left an empty page
 * with no pagination to go back by. `totalPages` 0 means not known yet (nothing loaded), not
 * "no pages", so it moves nothing.
 */
export function usePageInRange(page: number, totalPages: number, setPage: (page: number) => void): void {
  useEffect(() => {
    if (totalPages > 0 && page > totalPages) setPage(totalPages);
  }, [page, totalPages, setPage]);
}
