/**
 * /invitations/accept?token=…: the link of an invitation mail. The signed-in person accepts it
 * with their own token (acceptInvitation); on success their tenants are reloaded, the joined
 * tenant becomes current and the console opens it. Every refusal says why and what to do.
 * (Signed out, App.tsx shows the sign-in page at this same URL, so the token in the query stays.)
 */
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { acceptInvitationMutation } from '@generated/@tanstack/react-query.gen';
import { asProblem } from '../../api';
import { ErrorNotice } from '../../components/ErrorNotice';
import { Page } from '../../components/Page';
import { Outcome } from '../../components/tenant/Outcome';
import { invalidateOperations } from '../../components/tenant/queries';
import { Link, navigate, useLocation } from '../../router';
import { useSession } from '../../session';

function advice(status: number, error: string, me: string): string | null {
  if (status === 410) return 'Invitations are valid for a limited time. Ask an admin of the tenant to resend it: the new mail carries a fresh link.';
  if (status === 404 && error === 'Invitation not found') {
    return 'The link may have been used already, revoked by an admin, replaced by a resend (only the newest link works), or sent by someone who is no longer an admin. Ask an admin of the tenant for a new invitation.';
  }
  if (status === 403) return `You are signed in as ${me}. Sign out, then sign in with the address the invitation was sent to (with a verified email) and open the link again.`;
  if (status === 409) return 'You are already a member of this tenant: find it under your tenants.';
  return null;
}

export default function AcceptInvitation() {
  const s = useSession();
  const loc = useLocation();
  const queryClient = useQueryClient();
  const token = loc.query.get('token') ?? '';
  const me = s.identity?.email ?? s.identity?.subject ?? 'someone else';
  const [failures, setFailures] = useState(0);
  const accept = useMutation({
    ...acceptInvitationMutation(),
    onSuccess: async (joined) => {
      await invalidateOperations(queryClient, 'listMyTenants');
      s.selectTenant(joined.tenant.slug);
      navigate('/tenant');
    },
    onError: () => setFailures((n) => n + 1),
  });
  const problem = accept.error ? asProblem(accept.error) : null;
  const more = problem ? advice(problem.status, problem.error, me) : null;

  return (
    <Page title="Accept an invitation">
      {token ? (
        <>
          <p>
            An admin of a tenant invited you to join it. Accepting makes you a member with the role they chose; the tenant then appears under your
            tenants.
          </p>
          <dl className="facts">
            <dt>Signed in as</dt>
            <dd>{me}</dd>
            <dt>Who may accept</dt>
            <dd>Only the person signed in with the email address the invitation was sent to.</dd>
          </dl>
          <Outcome version={failures}>
            <ErrorNotice error={accept.error} />
            {more ? <p className="hint">{more}</p> : null}
          </Outcome>
          {problem?.status === 409 ? (
            <p>
              <Link to="/">Your tenants</Link>
            </p>
          ) : null}
          <button type="button" className="primary" disabled={accept.isPending || accept.isSuccess} onClick={() => accept.mutate({ body: { token } })}>
            {accept.isPending ? 'Accepting…' : 'Accept invitation'}
          </button>
        </>
      ) : (
        <div className="notice notice-error" role="alert">
          <p>
            <strong>No invitation in this link</strong>: the address must end in <code>?token=</code> followed by the invitation's token. Copy the
            whole link from the invitation mail.
          </p>
        </div>
      )}
    </Page>
  );
}
