/**
 * Where the outcome of a row action (a role change, a removal, a revoke) appears. The action's
 * button is disabled while it runs and is often replaced after it, which drops keyboard focus,
 * so focus moves here: the next Tab continues from the outcome, not from the top of the page.
 */
import { useEffect, useRef, type ReactNode } from 'react';

export function Outcome({ version, children }: { version: number; children: ReactNode }) {
  const ref = useRef<HTMLDivElement>(null);
  useEffect(() => {
    if (version > 0) ref.current?.focus();
  }, [version]);
  return (
    <div ref={ref} tabIndex={-1} className="outcome">
      {children}
    </div>
  );
}
