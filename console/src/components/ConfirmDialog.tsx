import { useEffect, useId, useRef, useState, type ReactNode } from 'react';

/**
 * A modal confirmation on the native <dialog> (focus is trapped and Escape cancels, by the
 * browser). With `typeToConfirm`, the confirm button stays disabled until that exact text is
 * typed: the typed-slug confirmation of a tenant delete.
 */
export function ConfirmDialog({
  open,
  title,
  children,
  confirmLabel,
  typeToConfirm,
  busy,
  onConfirm,
  onCancel,
}: {
  open: boolean;
  title: string;
  children: ReactNode;
  confirmLabel: string;
  typeToConfirm?: string;
  busy?: boolean;
  onConfirm: () => void;
  onCancel: () => void;
}) {
  const ref = useRef<HTMLDialogElement>(null);
  const [typed, setTyped] = useState('');
  const titleId = useId();
  const inputId = useId();
  useEffect(() => {
    const d = ref.current;
    if (!d) return;
    if (open && !d.open) {
      setTyped('');
      d.showModal();
    } else if (!open && d.open) d.close();
  }, [open]);
  const ready = typeToConfirm === undefined || typed === typeToConfirm;
  return (
    <dialog
      ref={ref}
      aria-labelledby={titleId}
      onCancel={(e) => {
        e.preventDefault();
        if (!busy) onCancel();
      }}
    >
      <form
        method="dialog"
        onSubmit={(e) => {
          e.preventDefault();
          if (ready && !busy) onConfirm();
        }}
      >
        <h2 id={titleId}>{title}</h2>
        {children}
        {typeToConfirm !== undefined ? (
          <p>
            <label htmlFor={inputId}>
              Type <strong>{typeToConfirm}</strong> to confirm
            </label>
            <input id={inputId} value={typed} onChange={(e) => setTyped(e.target.value)} autoComplete="off" spellCheck={false} />
          </p>
        ) : null}
        <div className="dialog-actions">
          <button type="button" onClick={onCancel} disabled={busy}>
            Cancel
          </button>
          <button type="submit" className="danger" disabled={!ready || busy}>
            {busy ? 'Working…' : confirmLabel}
          </button>
        </div>
      </form>
    </dialog>
  );
}
