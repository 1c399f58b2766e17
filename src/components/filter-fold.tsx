import { useState, type ReactNode } from 'react';
import { PHONE_SCREEN } from '../lib/use-media-query.ts';
import './filter-fold.css';

/**
 * Issue 11 item 11: on a phone the filters fold away behind one button (the list comes first);
 * on a wide screen they stay open. The button says how many filters are set while folded, and
 * names the sort when the fold holds one (`sorts`): behind "Filters", nothing on a phone said
 * the list could be sorted at all.
 */
export function FilterFold({ active, sorts = false, children }: { active: number; sorts?: boolean; children: ReactNode }) {
  const [open, setOpen] = useState(() => typeof window.matchMedia !== 'function' || !window.matchMedia(PHONE_SCREEN).matches);
  const what = sorts ? 'Filters & sort' : 'Filters';
  return (
    <div className="filter-fold">
      <button type="button" className="btn btn-small filter-fold-toggle" aria-expanded={open} onClick={() => setOpen((o) => !o)}>
        {open ? `Hide ${what.toLowerCase()}` : active > 0 ? `${what} (${active})` : what}
      </button>
      <div hidden={!open}>{children}</div>
    </div>
  );
}
