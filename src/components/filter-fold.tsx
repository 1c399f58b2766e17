import { useState, type ReactNode } from 'react';
import { PHONE_SCREEN } from '../lib/use-media-query.ts';
import './filter-fold.css';

/**
 * Issue 11 item 11: on a phone the filters fold away behind one button (the list comes first);
 * on a wide screen they stay open. The button says how many filters are set while folded.
 */
export function FilterFold({ active, children }: { active: number; children: ReactNode }) {
  const [open, setOpen] = useState(() => typeof window.matchMedia !== 'function' || !window.matchMedia(PHONE_SCREEN).matches);
  return (
    <div className="filter-fold">
      <button type="button" className="btn btn-small filter-fold-toggle" aria-expanded={open} onClick={() => setOpen((o) => !o)}>
        {open ? 'Hide filters' : active > 0 ? `Filters (${active})` : 'Filters'}
      </button>
      <div hidden={!open}>{children}</div>
    </div>
  );
}
