import { useId, useRef } from 'react';
import { dialogKeyDown, useModal } from './modal.ts';
import './action-sheet.css';

export interface SheetAction {
  label: string;
  onSelect: () => void;
  danger?: boolean;
  disabled?: boolean;
}

/**
 * Issue 11 item 11: a row's actions in a sheet that rises from the bottom of a phone's screen,
 * big enough for a thumb. Modal: focus moves in and returns, Escape or the backdrop closes it.
 */
export function ActionSheet({ title, subtitle, actions, onClose }: { title: string; subtitle?: string; actions: SheetAction[]; onClose: () => void }) {
  const titleId = useId();
  const boxRef = useRef<HTMLDivElement>(null);
  useModal(() => boxRef.current?.querySelector<HTMLButtonElement>('button:not(:disabled)'));
  const onKeyDown = (e: React.KeyboardEvent) => dialogKeyDown(e, boxRef.current, () => onClose());

  return (
    <div className="sheet-backdrop" onMouseDown={(e) => e.target === e.currentTarget && onClose()}>
      <div ref={boxRef} className="sheet" role="dialog" aria-modal="true" aria-labelledby={titleId} onKeyDown={onKeyDown}>
        <h2 id={titleId} className="sheet-title">
          {title}
        </h2>
        {subtitle && <p className="sheet-subtitle">{subtitle}</p>}
        <ul className="sheet-actions">
          {actions.map((a) => (
            <li key={a.label}>
              <button
                type="button"
                className={`btn sheet-action${a.danger ? ' sheet-danger' : ''}`}
                disabled={a.disabled}
                onClick={() => {
                  onClose();
                  a.onSelect();
                }}
              >
                {a.label}
              </button>
            </li>
          ))}
        </ul>
        <button type="button" className="btn sheet-cancel" onClick={onClose}>
          Cancel
        </button>
      </div>
    </div>
  );
}
