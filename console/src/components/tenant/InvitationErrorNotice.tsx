/**
 * A refused invitation change, with what the person can do: the shared rate limit of invitations
 * and resends (429, its wait in the sentence), or the pending invitation or membership a 409 names.
 */
import { asProblem } from '../../api';
import { ErrorNotice } from '../ErrorNotice';

export function InvitationErrorNotice({ error, action }: { error: unknown; action: string }) {
  if (error === null || error === undefined) return null;
  const p = asProblem(error);
  return (
    <>
      <ErrorNotice error={error} title={`Could not ${action}`} />
      {p.status === 429 ? (
        <p className="hint">Sending and resending invitations share one limit per admin (50 an hour); nothing was sent.</p>
      ) : p.status === 409 ? (
        <p className="hint">Each address has at most one pending invitation (resend it from the list below, or revoke it first), and a member needs none.</p>
      ) : null}
    </>
  );
}
