import { useId, useState, type FormEvent } from 'react';
import { pageWindow, parsePageNumber } from './page-window.ts';
import './pagination.css';

interface Props {
  page: number;
  totalPages: number;
  onPageChange: (page: number) => void;
}

/** Spec §2/§9 numbered pagination with ellipsis and a 'Go to page' box. */
export function Pagination({ page, totalPages, onPageChange: setPage }: Props) {
  const [goTo, setGoTo] = useState('');
  const [error, setError] = useState('');
  const inputId = useId();
  const errorId = useId();
  if (totalPages <= 1) return null;

  // Issue 11 item 10: a new page of results starts at the top, like a new screen.
  function onPageChange(target: number) {
    setPage(target);
    window.scrollTo(0, 0);
  }

  function submit(e: FormEvent) {
    e.preventDefault();
    const target = parsePageNumber(goTo, totalPages);
    if (target === null) {
      setError('Invalid page number');
      return;
    }
    setError('');
    setGoTo('');
    onPageChange(target);
  }

  return (
    <nav className="pagination" aria-label="Pagination">
      <ul className="pagination-pages">
        <li>
          <button type="button" className="btn btn-small" disabled={page <= 1} onClick={() => onPageChange(page - 1)} aria-label="Previous page">
            ‹
          </button>
        </li>
        {pageWindow(page, totalPages).map((slot) =>
          typeof slot === 'number' ? (
            <li key={slot}>
              <button
                type="button"
                className={`btn btn-small${slot === page ? ' btn-primary' : ''}`}
                aria-current={slot === page ? 'page' : undefined}
                aria-label={`Page ${slot}`}
                onClick={() => onPageChange(slot)}
              >
                {slot}
              </button>
            </li>
          ) : (
            <li key={slot} className="pagination-ellipsis" aria-hidden="true">
              …
            </li>
          ),
        )}
        <li>
          <button type="button" className="btn btn-small" disabled={page >= totalPages} onClick={() => onPageChange(page + 1)} aria-label="Next page">
            ›
          </button>
        </li>
      </ul>
      <form className="pagination-goto" onSubmit={submit} noValidate>
        <label htmlFor={inputId}>Go to page</label>
        <input
          id={inputId}
          className="input input-small"
          inputMode="numeric"
          value={goTo}
          onChange={(e) => setGoTo(e.target.value)}
          aria-invalid={error ? true : undefined}
          aria-describedby={error ? errorId : undefined}
        />
        <button type="submit" className="btn btn-small">
          Go
        </button>
        {error && (
          <p id={errorId} className="field-error" role="alert">
            {error}
          </p>
        )}
      </form>
    </nav>
  );
}
