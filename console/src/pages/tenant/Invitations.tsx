/**
 * /tenant/invitations (tenant admins): invite someone (createInvitation), the invitations a page
 * at a time with a status filter (listInvitations), resend (resendInvitation: a new link, the
 * old one stops working), revoke (revokeInvitation, confirmed), and the accept link to copy
 * when the service returns it (on create and resend only: it keeps a hash of the token).
 */
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useId, useState } from 'react';
import { listInvitationsOptions, resendInvitationMutation, revokeInvitationMutation } from '@generated/@tanstack/react-query.gen';
import type { Invitation, InvitationStatus, InvitationWithToken } from '@generated/types.gen';
import { ConfirmDialog } from '../../components/ConfirmDialog';
import { ErrorNotice, SuccessNotice } from '../../components/ErrorNotice';
import { Loading, Page } from '../../components/Page';
import { Pager, useCursorPager } from '../../components/Pager';
import { Time } from '../../components/Time';
import { InvitationErrorNotice } from '../../components/tenant/InvitationErrorNotice';
import { InvitationLink } from '../../components/tenant/InvitationLink';
import { InviteForm } from '../../components/tenant/InviteForm';
import { Outcome } from '../../components/tenant/Outcome';
import { invalidateOperations } from '../../components/tenant/queries';
import { useSession } from '../../session';

const PAGE_SIZE = 25;
const STATUSES: InvitationStatus[] = ['pending', 'accepted', 'revoked', 'expired'];
const DELIVERY: Record<Invitation['delivery'], string> = { sent: 'Mailed', failed: 'Mail failed', not_configured: 'No mail configured' };

export default function Invitations() {
  const s = useSession();
  const queryClient = useQueryClient();
  const filterId = useId();
  const pager = useCursorPager();
  const [status, setStatus] = useState<InvitationStatus | ''>('');
  const [link, setLink] = useState<{ invitation: InvitationWithToken; action: 'created' | 'resent' } | null>(null);
  const [revoking, setRevoking] = useState<Invitation | null>(null);
  const [revoked, setRevoked] = useState<string | null>(null);
  const [outcomes, setOutcomes] = useState(0);
  const settled = () => setOutcomes((n) => n + 1);
  const list = useQuery(
    listInvitationsOptions({
      headers: s.tenantHeaders,
      query: { limit: PAGE_SIZE, ...(status ? { status } : {}), ...(pager.cursor ? { cursor: pager.cursor } : {}) },
    }),
  );
  const resend = useMutation({
    ...resendInvitationMutation(),
    onMutate: () => {
      setRevoked(null);
      revoke.reset();
    },
    onSuccess: async (inv) => {
      setLink({ invitation: inv, action: 'resent' });
      await invalidateOperations(queryClient, 'listInvitations', 'listTenantEvents');
    },
    onError: settled,
  });
  const revoke = useMutation({
    ...revokeInvitationMutation(),
    onMutate: () => {
      setLink(null);
      resend.reset();
    },
    onSuccess: async (inv) => {
      setRevoking(null);
      setRevoked(`The invitation for ${inv.email} is revoked: its link no longer works.`);
      await invalidateOperations(queryClient, 'listInvitations', 'listTenantEvents');
      settled();
    },
    onError: () => {
      setRevoking(null);
      settled();
    },
  });
  const busy = resend.isPending || revoke.isPending;

  return (
    <Page title="Invitations">
      <InviteForm
        onCreated={(inv) => {
          setRevoked(null);
          resend.reset();
          revoke.reset();
          setLink({ invitation: inv, action: 'created' });
        }}
      />
      {link ? <InvitationLink invitation={link.invitation} action={link.action} /> : null}
      {/* Before the outcome: closing the dialog returns focus to its opener, then the outcome takes it. */}
      <ConfirmDialog
        open={revoking !== null}
        title="Revoke this invitation?"
        confirmLabel="Revoke"
        busy={revoke.isPending}
        onCancel={() => setRevoking(null)}
        onConfirm={() => revoking && revoke.mutate({ headers: s.tenantHeaders, path: { invitation_id: revoking.invitation_id } })}
      >
        <p>
          The link sent to <strong>{revoking?.email}</strong> stops working at once. You can invite the address again afterwards.
        </p>
      </ConfirmDialog>
      <Outcome version={outcomes}>
        <InvitationErrorNotice error={resend.error} action="resend the invitation" />
        <ErrorNotice error={revoke.error} title="Could not revoke the invitation" />
        <SuccessNotice>{revoked}</SuccessNotice>
      </Outcome>

      <section aria-labelledby={`${filterId}-h`}>
        <h2 id={`${filterId}-h`}>Sent invitations</h2>
        <div className="form-row">
          <div className="field">
            <label htmlFor={filterId}>Status</label>
            <select
              id={filterId}
              value={status}
              onChange={(e) => {
                setStatus(e.target.value as InvitationStatus | '');
                pager.reset();
              }}
            >
              <option value="">All</option>
              {STATUSES.map((st) => (
                <option key={st} value={st}>
                  {st}
                </option>
              ))}
            </select>
          </div>
        </div>
        {list.isPending ? <Loading what="invitations" /> : null}
        <ErrorNotice error={list.error} />
        {list.data ? (
          <>
            {list.data.invitations.length ? (
              <table>
                <caption className="visually-hidden">Invitations{status ? ` (${status})` : ''}, newest first</caption>
                <thead>
                  <tr>
                    <th scope="col">Email</th>
                    <th scope="col">Role</th>
                    <th scope="col">Status</th>
                    <th scope="col">Mail</th>
                    <th scope="col">Invited by</th>
                    <th scope="col">Sent</th>
                    <th scope="col">Expires</th>
                    <th scope="col">Actions</th>
                  </tr>
                </thead>
                <tbody>
                  {list.data.invitations.map((inv) => (
                    <tr key={inv.invitation_id}>
                      <td>{inv.email}</td>
                      <td>{inv.role}</td>
                      <td>{inv.status}</td>
                      <td>{DELIVERY[inv.delivery]}</td>
                      <td>{inv.invited_by.email ?? 'a platform admin'}</td>
                      <td>
                        <Time value={inv.created_at} />
                      </td>
                      <td>
                        <Time value={inv.expires_at} />
                      </td>
                      <td className="row-actions">
                        {inv.status === 'pending' || inv.status === 'expired' ? (
                          <button
                            type="button"
                            disabled={busy}
                            aria-label={`Resend the invitation for ${inv.email}`}
                            onClick={() => resend.mutate({ headers: s.tenantHeaders, path: { invitation_id: inv.invitation_id } })}
                          >
                            Resend
                          </button>
                        ) : null}{' '}
                        {inv.status === 'pending' ? (
                          <button type="button" disabled={busy} aria-label={`Revoke the invitation for ${inv.email}`} onClick={() => setRevoking(inv)}>
                            Revoke
                          </button>
                        ) : null}
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            ) : (
              <p>{status ? `No ${status} invitations.` : 'No invitations yet.'}</p>
            )}
            <Pager
              label="Invitation pages"
              page={pager.page}
              nextCursor={list.data.next_cursor}
              onNext={pager.next}
              onPrevious={pager.previous}
              summary={`${list.data.total_count} in all`}
            />
          </>
        ) : null}
      </section>
    </Page>
  );
}
