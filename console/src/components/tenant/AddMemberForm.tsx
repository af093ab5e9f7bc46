/**
 * Adding an existing user to the tenant directly (addMember): the operator's act, so the
 * Members page shows this form only to platform admins. Tenant admins invite instead.
 */
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useId, useState, type FormEvent } from 'react';
import { addMemberMutation } from '@generated/@tanstack/react-query.gen';
import type { MemberRole } from '@generated/types.gen';
import { ErrorNotice, SuccessNotice } from '../ErrorNotice';
import { useSession } from '../../session';
import { invalidateOperations } from './queries';
import { RoleSelect } from './RoleSelect';

export function AddMemberForm() {
  const s = useSession();
  const queryClient = useQueryClient();
  const id = useId();
  const [subject, setSubject] = useState('');
  const [email, setEmail] = useState('');
  const [issuer, setIssuer] = useState('');
  const [role, setRole] = useState<MemberRole>('member');
  const add = useMutation({
    ...addMemberMutation(),
    onSuccess: async () => {
      setSubject('');
      setEmail('');
      setIssuer('');
      await invalidateOperations(queryClient, 'listMembers', 'listTenantEvents');
    },
  });
  function submit(e: FormEvent) {
    e.preventDefault();
    add.mutate({
      headers: s.tenantHeaders,
      body: { subject: subject.trim(), email: email.trim(), role, ...(issuer.trim() ? { issuer: issuer.trim() } : {}) },
    });
  }
  return (
    <section aria-labelledby={`${id}-h`}>
      <h2 id={`${id}-h`}>Add a user directly (platform admin)</h2>
      <p className="hint">
        Adds someone without their consent, as the operator. A tenant admin invites people instead, and they accept with their own sign-in.
      </p>
      <form onSubmit={submit}>
        <div className="form-row">
          <div className="field">
            <label htmlFor={`${id}-sub`}>Subject (sub)</label>
            <input id={`${id}-sub`} required maxLength={255} value={subject} onChange={(e) => setSubject(e.target.value)} autoComplete="off" />
          </div>
          <div className="field">
            <label htmlFor={`${id}-email`}>Email</label>
            <input id={`${id}-email`} type="email" required value={email} onChange={(e) => setEmail(e.target.value)} autoComplete="off" />
          </div>
          <div className="field">
            <label htmlFor={`${id}-iss`}>Issuer (optional)</label>
            <input id={`${id}-iss`} maxLength={255} value={issuer} onChange={(e) => setIssuer(e.target.value)} aria-describedby={`${id}-iss-hint`} />
            <span id={`${id}-iss-hint`} className="hint">
              Defaults to the issuer of your own sign-in.
            </span>
          </div>
          <RoleSelect id={`${id}-role`} value={role} onChange={setRole} />
          <button type="submit" disabled={add.isPending}>
            {add.isPending ? 'Adding…' : 'Add user'}
          </button>
        </div>
      </form>
      <ErrorNotice error={add.error} title="Could not add the user" />
      {add.isSuccess ? <SuccessNotice>Added {add.data.email ?? add.data.subject} as {add.data.role}.</SuccessNotice> : null}
    </section>
  );
}
