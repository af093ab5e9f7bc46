import { useEffect, useRef, type ReactNode } from 'react';

/**
 * A page: its <h1>, the document title, and focus moved to the heading on arrival so that a
 * keyboard or screen-reader user starts at the new page's top, not on the link they followed.
 */
export function Page({ title, actions, children }: { title: string; actions?: ReactNode; children: ReactNode }) {
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => {
    document.title = `${title} · tenant-service console`;
    heading.current?.focus({ preventScroll: true });
  }, [title]);
  return (
    <>
      <div className="page-head">
        <h1 tabIndex={-1} ref={heading}>
          {title}
        </h1>
        {actions ? <div className="page-actions">{actions}</div> : null}
      </div>
      {children}
    </>
  );
}

/** "Loading…" announced to assistive technology. */
export function Loading({ what }: { what: string }) {
  return (
    <p className="loading" role="status">
      Loading {what}…
    </p>
  );
}
