/**
 * /tenant/members: the tenant's members, a page at a time (listMembers). Admins change a
 * member's role (updateMemberRole) and remove members (removeMember); the last-admin refusal
 * (409) is explained where it happens. Members see the list only, without admin controls.
 * Platform admins may also add a user directly (addMember, components/tenant/AddMemberForm).
 * Members provisioned by the tenant's directory (`directory_managed`) are marked as such, and
 * deactivated when the directory deactivated them (`directory_active`); their role is the
 * directory's (a change here is refused), so they have no role controls.
 */
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { listMembersOptions, removeMemberMutation, updateMemberRoleMutation } from '@generated/@tanstack/react-query.gen';
import type { Member, MemberRole } from '@generated/types.gen';
import { ConfirmDialog } from '../../components/ConfirmDialog';
import { ErrorNotice, SuccessNotice } from '../../components/ErrorNotice';
import { Loading, Page } from '../../components/Page';
import { Pager, useCursorPager } from '../../components/Pager';
import { Time } from '../../components/Time';
import { AddMemberForm } from '../../components/tenant/AddMemberForm';
import { MembershipErrorNotice } from '../../components/tenant/LastAdminNotice';
import { Outcome } from '../../components/tenant/Outcome';
import { invalidateOperations } from '../../components/tenant/queries';
import { allows, useTenantRoles } from '../../components/tenant/RoleSelect';
import { useSession } from '../../session';
import { ADMIN_ROLE, MEMBER_ROLE } from '@service/context/roles';

const PAGE_SIZE = 50;

function who(m: Member): string {
  return m.display_name ?? m.email ?? m.subject;
}

export default function Members() {
  const s = useSession();
  const queryClient = useQueryClient();
  const pager = useCursorPager();
  const list = useQuery(listMembersOptions({ headers: s.tenantHeaders, query: { limit: PAGE_SIZE, ...(pager.cursor ? { cursor: pager.cursor } : {}) } }));
  const [done, setDone] = useState<string | null>(null);
  const [outcomes, setOutcomes] = useState(0);
  const settled = () => setOutcomes((n) => n + 1);
  const [confirm, setConfirm] = useState<{ kind: 'remove' | 'demote-self'; member: Member; to?: MemberRole } | null>(null);
  const admin = s.holds('tenant:members:write') || s.isPlatformAdmin === true;
  const roles = useTenantRoles(admin);
  const isSelf = (m: Member) => s.identity !== null && m.subject === s.identity.subject && m.issuer === s.identity.issuer;

  const afterChange = () => invalidateOperations(queryClient, 'listMembers', 'listMyTenants', 'getCurrentTenant', 'listTenantEvents', 'listInvitations');
  const role = useMutation({
    ...updateMemberRoleMutation(),
    onMutate: () => {
      setDone(null);
      remove.reset();
    },
    onSuccess: async (m) => {
      setConfirm(null);
      setDone(m.role === ADMIN_ROLE || m.role === MEMBER_ROLE ? `${who(m)} is now ${m.role === ADMIN_ROLE ? 'an admin' : 'a member'}.` : `${who(m)} now has the role ${m.role}.`);
      await afterChange();
      settled();
    },
    onError: () => {
      setConfirm(null);
      settled();
    },
  });
  const remove = useMutation({
    ...removeMemberMutation(),
    onMutate: () => {
      setDone(null);
      role.reset();
    },
    onSuccess: async (_data, vars) => {
      const m = list.data?.members.find((x) => x.user_id === vars.path.user_id);
      setConfirm(null);
      setDone(`${m ? who(m) : 'The member'} was removed from the tenant.`);
      await afterChange();
      settled();
    },
    onError: () => {
      setConfirm(null);
      settled();
    },
  });

  function changeRole(m: Member, to: MemberRole) {
    role.mutate({ headers: s.tenantHeaders, path: { user_id: m.user_id }, body: { role: to } });
  }

  const busy = role.isPending || remove.isPending;
  return (
    <Page title="Members">
      {admin ? (
        <p className="hint">
          New people join by invitation, which they accept with their own sign-in. A tenant always keeps at least one admin.
        </p>
      ) : null}
      {/* Before the outcome: closing the dialog returns focus to its opener, then the outcome takes it. */}
      {admin ? (
        <ConfirmDialog
          open={confirm !== null}
          title={confirm?.kind === 'remove' ? `Remove ${confirm ? who(confirm.member) : ''}?` : 'Give up your admin role?'}
          confirmLabel={confirm?.kind === 'remove' ? 'Remove' : 'Make me a member'}
          busy={busy}
          onCancel={() => setConfirm(null)}
          onConfirm={() => {
            if (!confirm) return;
            if (confirm.kind === 'remove') remove.mutate({ headers: s.tenantHeaders, path: { user_id: confirm.member.user_id } });
            else changeRole(confirm.member, confirm.to ?? MEMBER_ROLE);
          }}
        >
          {confirm?.kind === 'remove' ? (
            <p>
              {who(confirm.member)} loses access to this tenant at once, and the invitations they sent that are still pending are revoked.
            </p>
          ) : (
            <p>You will no longer be able to manage members, invitations or events here; another admin can make you admin again.</p>
          )}
        </ConfirmDialog>
      ) : null}
      <Outcome version={outcomes}>
        <MembershipErrorNotice error={role.error} action="change the role" />
        <MembershipErrorNotice error={remove.error} action="remove the member" />
        <SuccessNotice>{done}</SuccessNotice>
      </Outcome>
      {list.isPending ? <Loading what="members" /> : null}
      <ErrorNotice error={list.error} />
      {list.data ? (
        <>
          <table>
            <caption className="visually-hidden">Members of {s.currentTenant?.name ?? 'the tenant'}</caption>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Email</th>
                <th scope="col">Subject</th>
                <th scope="col">Role</th>
                <th scope="col">Allows</th>
                <th scope="col">Member since</th>
                {admin ? <th scope="col">Actions</th> : null}
              </tr>
            </thead>
            <tbody>
              {list.data.members.map((m) => (
                <tr key={m.user_id}>
                  <td>
                    {m.display_name ?? '—'}
                    {isSelf(m) ? ' (you)' : ''}
                    {m.directory_managed ? <span className="badge">Directory</span> : null}
                    {m.directory_active === false ? <span className="badge">Deactivated</span> : null}
                  </td>
                  <td>{m.email ?? '—'}</td>
                  <td>
                    <code>{m.subject}</code>
                  </td>
                  <td>{m.role}</td>
                  <td>{allows(m.permissions)}</td>
                  <td>
                    <Time value={m.created_at} />
                  </td>
                  {admin ? (
                    <td className="row-actions">
                      {m.directory_managed ? (
                        <span className="hint">Role from the directory</span>
                      ) : m.role === ADMIN_ROLE ? (
                        <button
                          type="button"
                          disabled={busy}
                          aria-label={`Make member: ${who(m)}`}
                          onClick={() => (isSelf(m) ? setConfirm({ kind: 'demote-self', member: m }) : changeRole(m, MEMBER_ROLE))}
                        >
                          Make member
                        </button>
                      ) : (
                        <button type="button" disabled={busy} aria-label={`Make admin: ${who(m)}`} onClick={() => changeRole(m, ADMIN_ROLE)}>
                          Make admin
                        </button>
                      )}{' '}
                      {roles && !m.directory_managed ? (
                        <select
                          aria-label={`Role of ${who(m)}`}
                          value={m.role}
                          disabled={busy}
                          onChange={(e) => {
                            const to = e.target.value;
                            if (isSelf(m) && m.role === ADMIN_ROLE) setConfirm({ kind: 'demote-self', member: m, to });
                            else changeRole(m, to);
                          }}
                        >
                          {roles.map((r) => (
                            <option key={r.key} value={r.key}>
                              {r.key} — {allows(r.permissions)}
                            </option>
                          ))}
                        </select>
                      ) : null}{' '}
                      {isSelf(m) ? null : (
                        <button type="button" disabled={busy} aria-label={`Remove ${who(m)}`} onClick={() => setConfirm({ kind: 'remove', member: m })}>
                          Remove
                        </button>
                      )}
                    </td>
                  ) : null}
                </tr>
              ))}
            </tbody>
          </table>
          {list.data.members.length === 0 ? <p>No members on this page.</p> : null}
          {list.data.members.some((m) => m.directory_managed) ? (
            <p className="hint">
              Members marked Directory come from the tenant&apos;s directory (SCIM): it deactivates (Deactivated: refused at every request) and removes
              them, and its groups set their role when the Directory page maps them, so their role is changed there, not here.
            </p>
          ) : null}
          <Pager label="Members pages" page={pager.page} nextCursor={list.data.next_cursor} onNext={pager.next} onPrevious={pager.previous} />
        </>
      ) : null}
      {s.isPlatformAdmin ? <AddMemberForm /> : null}
    </Page>
  );
}
