import type { ApiProblem } from '../api';
import { asProblem } from '../api';

/**
 * An error as a sentence with its request ID (never a stack or a raw body). `role="alert"`
 * makes a screen reader announce it when it appears.
 */
export function ErrorNotice({ error, title }: { error: unknown; title?: string }) {
  if (error === null || error === undefined) return null;
  const p: ApiProblem = asProblem(error);
  return (
    <div className="notice notice-error" role="alert">
      <p>
        <strong>{title ?? p.error}</strong>
        {title || p.error ? ': ' : ''}
        {p.sentence}
      </p>
      {p.requestId ? (
        <p className="request-id">
          Request ID: <code>{p.requestId}</code>
        </p>
      ) : null}
    </div>
  );
}

/** A short confirmation that something worked, announced politely. */
export function SuccessNotice({ children }: { children: React.ReactNode }) {
  if (!children) return null;
  return (
    <div className="notice notice-ok" role="status">
      {children}
    </div>
  );
}
