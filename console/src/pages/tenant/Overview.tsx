/**
 * /tenant: the current tenant (getCurrentTenant) — name, slug, status, the caller's role, when it
 * was created — and "Leave this tenant" (leaveTenant), refused with 409 for its last admin.
 */
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { getCurrentTenantOptions, leaveTenantMutation } from '@generated/@tanstack/react-query.gen';
import { ConfirmDialog } from '../../components/ConfirmDialog';
import { ErrorNotice } from '../../components/ErrorNotice';
import { Loading, Page } from '../../components/Page';
import { Time } from '../../components/Time';
import { MembershipErrorNotice } from '../../components/tenant/LastAdminNotice';
import { Outcome } from '../../components/tenant/Outcome';
import { invalidateOperations } from '../../components/tenant/queries';
import { Link, navigate } from '../../router';
import { useSession } from '../../session';

export default function Overview() {
  const s = useSession();
  const queryClient = useQueryClient();
  const current = useQuery(getCurrentTenantOptions({ headers: s.tenantHeaders }));
  const [confirming, setConfirming] = useState(false);
  const [failures, setFailures] = useState(0);
  const leave = useMutation({
    ...leaveTenantMutation(),
    onSuccess: async (left) => {
      setConfirming(false);
      await invalidateOperations(queryClient, 'listMyTenants');
      navigate(`/?left=${encodeURIComponent(left.tenant_slug)}`);
    },
    onError: () => {
      setConfirming(false);
      setFailures((n) => n + 1);
    },
  });

  const tenant = current.data?.tenant;
  const membership = current.data?.membership;
  return (
    <Page title="Tenant">
      {current.isPending ? <Loading what="the tenant" /> : null}
      <ErrorNotice error={current.error} />
      {tenant ? (
        <>
          <h2>{tenant.name}</h2>
          <dl className="facts">
            <dt>Slug</dt>
            <dd>
              <code>{tenant.slug}</code>
            </dd>
            <dt>Status</dt>
            <dd>{tenant.status === 'pending_approval' ? 'Waiting for approval by a platform admin' : 'Active'}</dd>
            <dt>Your role</dt>
            <dd>{membership ? membership.role : 'Not a member (you see it as a platform admin)'}</dd>
            <dt>Created</dt>
            <dd>
              <Time value={tenant.created_at} />
            </dd>
          </dl>
          <p>
            {[
              s.holds('tenant:members:read') ? <Link key="members" to="/tenant/members">Members</Link> : null,
              s.holds('tenant:invitations:write') ? <Link key="invitations" to="/tenant/invitations">Invitations</Link> : null,
              s.holds('tenant:events:read') ? <Link key="events" to="/tenant/events">Tenant events</Link> : null,
            ]
              .filter((l) => l !== null)
              .flatMap((l, i) => (i === 0 ? [l] : [' · ', l]))}
          </p>
          {membership ? (
            <section aria-labelledby="leave-heading">
              <h2 id="leave-heading">Leave this tenant</h2>
              <p>You lose access to {tenant.name} at once; an admin can invite you again later.</p>
              {/* Before the outcome: closing the dialog returns focus to its opener, then the outcome takes it. */}
              <ConfirmDialog
                open={confirming}
                title={`Leave ${tenant.name}?`}
                confirmLabel="Leave"
                busy={leave.isPending}
                onCancel={() => setConfirming(false)}
                onConfirm={() => leave.mutate({ headers: s.tenantHeaders })}
              >
                <p>
                  You will no longer be a member of <strong>{tenant.name}</strong>. Invitations you sent that are still pending are revoked.
                </p>
              </ConfirmDialog>
              <Outcome version={failures}>
                <MembershipErrorNotice
                  error={leave.error}
                  action="leave this tenant"
                  why="you are its last admin, and a tenant must keep at least one admin."
                />
              </Outcome>
              <button type="button" className="danger" disabled={leave.isPending} onClick={() => setConfirming(true)}>
                Leave this tenant
              </button>
            </section>
          ) : null}
        </>
      ) : null}
    </Page>
  );
}
