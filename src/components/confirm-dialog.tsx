import { createContext, useCallback, useContext, useId, useRef, useState, type ReactNode } from 'react';
import { dialogKeyDown, useModal } from './modal.ts';
import './confirm-dialog.css';

export interface ConfirmOptions {
  confirmLabel?: string;
  danger?: boolean;
}
type Confirm = (message: string, options?: ConfirmOptions) => Promise<boolean>;

const ConfirmContext = createContext<Confirm | null>(null);

interface Pending extends ConfirmOptions {
  message: string;
  resolve: (ok: boolean) => void;
}

/**
 * One accessible modal for every "are you sure" of the app (spec §4 ban/unban, deletes): focus
 * moves into it, Tab stays inside, Escape or the backdrop cancels, and focus returns afterwards.
 */
export function ConfirmProvider({ children }: { children: ReactNode }) {
  const [pending, setPending] = useState<Pending | null>(null);
  const confirm = useCallback<Confirm>(
    (message, options) => new Promise<boolean>((resolve) => setPending({ message, resolve, ...options })),
    [],
  );
  const close = (ok: boolean) => {
    pending?.resolve(ok);
    setPending(null);
  };
  return (
    <ConfirmContext.Provider value={confirm}>
      {children}
      {pending && <ConfirmModal pending={pending} onClose={close} />}
    </ConfirmContext.Provider>
  );
}

function ConfirmModal({ pending, onClose }: { pending: Pending; onClose: (ok: boolean) => void }) {
  const boxRef = useRef<HTMLDivElement>(null);
  const cancelRef = useRef<HTMLButtonElement>(null);
  const textId = useId();

  useModal(cancelRef); // the safe choice has focus, so Enter never deletes by accident
  const onKeyDown = (e: React.KeyboardEvent) => dialogKeyDown(e, boxRef.current, () => onClose(false));

  return (
    <div className="modal-backdrop" onMouseDown={(e) => e.target === e.currentTarget && onClose(false)}>
      <div ref={boxRef} className="modal card" role="alertdialog" aria-modal="true" aria-labelledby={textId} onKeyDown={onKeyDown}>
        <p id={textId} className="modal-text">
          {pending.message}
        </p>
        <div className="modal-actions">
          <button ref={cancelRef} type="button" className="btn" onClick={() => onClose(false)}>
            Cancel
          </button>
          <button type="button" className={`btn ${pending.danger ? 'btn-danger' : 'btn-primary'}`} onClick={() => onClose(true)}>
            {pending.confirmLabel ?? 'Confirm'}
          </button>
        </div>
      </div>
    </div>
  );
}

export function useConfirm(): Confirm {
  const confirm = useContext(ConfirmContext);
  if (!confirm) throw new Error('useConfirm must be used inside <ConfirmProvider>');
  return confirm;
}
