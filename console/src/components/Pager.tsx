import { useState } from 'react';

/**
 * Cursor paging as the API does it (`next_cursor`, null on the last page): a stack of the
 * cursors that led to each page, so "Previous" goes back without the API knowing about it.
 */
export function useCursorPager() {
  const [stack, setStack] = useState<string[]>([]);
  const cursor = stack.length ? stack[stack.length - 1] : undefined;
  return {
    cursor,
    page: stack.length + 1,
    next(nextCursor: string) {
      setStack((s) => [...s, nextCursor]);
    },
    previous() {
      setStack((s) => s.slice(0, -1));
    },
    reset() {
      setStack([]);
    },
  };
}

export function Pager({
  label,
  page,
  nextCursor,
  onNext,
  onPrevious,
  summary,
}: {
  label: string;
  page: number;
  nextCursor: string | null | undefined;
  onNext: (cursor: string) => void;
  onPrevious: () => void;
  summary?: string;
}) {
  return (
    <nav className="pager" aria-label={label}>
      <button type="button" onClick={onPrevious} disabled={page <= 1}>
        Previous page
      </button>
      <span aria-live="polite">
        Page {page}
        {summary ? ` · ${summary}` : ''}
      </span>
      <button type="button" onClick={() => nextCursor && onNext(nextCursor)} disabled={!nextCursor}>
        Next page
      </button>
    </nav>
  );
}
