/**
 * The invitation form (createInvitation): an email address and a role. The answer, with its
 * one-time accept link, is handed to the page to show.
 */
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useId, useState, type FormEvent } from 'react';
import { createInvitationMutation } from '@generated/@tanstack/react-query.gen';
import type { InvitationWithToken, MemberRole } from '@generated/types.gen';
import { useSession } from '../../session';
import { InvitationErrorNotice } from './InvitationErrorNotice';
import { Outcome } from './Outcome';
import { invalidateOperations } from './queries';
import { RoleSelect } from './RoleSelect';

export function InviteForm({ onCreated }: { onCreated: (inv: InvitationWithToken) => void }) {
  const s = useSession();
  const queryClient = useQueryClient();
  const id = useId();
  const [email, setEmail] = useState('');
  const [role, setRole] = useState<MemberRole>('member');
  const [failures, setFailures] = useState(0);
  const create = useMutation({
    ...createInvitationMutation(),
    onSuccess: async (inv) => {
      setEmail('');
      setRole('member');
      onCreated(inv);
      await invalidateOperations(queryClient, 'listInvitations', 'listTenantEvents');
    },
    onError: () => setFailures((n) => n + 1),
  });
  function submit(e: FormEvent) {
    e.preventDefault();
    create.mutate({ headers: s.tenantHeaders, body: { email: email.trim(), role } });
  }
  return (
    <section aria-labelledby={`${id}-h`}>
      <h2 id={`${id}-h`}>Invite someone</h2>
      <form onSubmit={submit}>
        <div className="form-row">
          <div className="field">
            <label htmlFor={`${id}-email`}>Email address</label>
            <input
              id={`${id}-email`}
              type="email"
              required
              autoComplete="off"
              value={email}
              onChange={(e) => setEmail(e.target.value)}
              aria-describedby={`${id}-email-hint`}
            />
            <span id={`${id}-email-hint`} className="hint">
              They accept by signing in with this address.
            </span>
          </div>
          <RoleSelect id={`${id}-role`} value={role} onChange={setRole} />
          <button type="submit" className="primary" disabled={create.isPending}>
            {create.isPending ? 'Sending…' : 'Send invitation'}
          </button>
        </div>
      </form>
      <Outcome version={failures}>
        <InvitationErrorNotice error={create.error} action="send the invitation" />
      </Outcome>
    </section>
  );
}
