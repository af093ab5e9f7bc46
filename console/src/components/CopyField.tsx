/**
 * A value to paste elsewhere (an accept link, a SCIM base URL, a secret shown once): a labelled
 * read-only field that selects itself on focus, its hint, and a Copy button saying whether the
 * browser let it copy (when it does not, the text is left selected for Ctrl+C).
 */
import { useEffect, useId, useRef, useState, type ReactNode } from 'react';

export function CopyField({ label, value, copyLabel, hint }: { label: string; value: string; copyLabel: string; hint?: ReactNode }) {
  const id = useId();
  const field = useRef<HTMLInputElement>(null);
  const [copied, setCopied] = useState<'yes' | 'no' | null>(null);
  // A new value (a resent link, another token) has not been copied yet.
  useEffect(() => setCopied(null), [value]);
  async function copy() {
    field.current?.select();
    try {
      await navigator.clipboard.writeText(value);
      setCopied('yes');
    } catch {
      setCopied('no');
    }
  }
  return (
    <>
      <div className="field copy-field">
        <label htmlFor={id}>{label}</label>
        <input id={id} ref={field} readOnly value={value} onFocus={(e) => e.currentTarget.select()} aria-describedby={hint ? `${id}-hint` : undefined} />
        {hint ? (
          <span id={`${id}-hint`} className="hint">
            {hint}
          </span>
        ) : null}
      </div>
      <p>
        <button type="button" onClick={() => void copy()}>
          {copyLabel}
        </button>{' '}
        <span aria-live="polite">{copied === 'yes' ? 'Copied.' : copied === 'no' ? 'The browser refused the clipboard: the text is selected, copy it with Ctrl+C.' : ''}</span>
      </p>
    </>
  );
}
