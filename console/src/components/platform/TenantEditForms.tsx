/**
 * The edit forms of a tenant's page, each its own updateTenant call with its own button, pending
 * state, refusal and confirmation: details (name, slug, status, settings), membership policy,
 * identity links, and the Approve button of a tenant waiting for approval.
 */
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useId, useState, type FormEvent, type ReactNode } from 'react';
import { getTenantQueryKey, updateTenantMutation } from '@generated/@tanstack/react-query.gen';
import type { IdentityLink, Tenant, TenantStatus, UpdateTenantRequest } from '@generated/types.gen';
import { isSettable, SETTABLE_STATUSES } from '@service/context/tenant-status';
import { ErrorNotice, SuccessNotice } from '../ErrorNotice';
import { completeLinks, IdentityLinksEditor } from './IdentityLinksEditor';
import { MembershipPolicyFields, policyInput, type PolicyDraft } from './MembershipPolicyFields';
import { invalidateTenantReads, parseSettings, slugProblem, statusLabel } from './tenant-forms';
import { Problems } from '../Problems';

/** updateTenant for one tenant, with the page's cache updated and what it said kept. */
function useUpdate(tenant: Tenant, done: string) {
  const queryClient = useQueryClient();
  const [saved, setSaved] = useState<string | null>(null);
  const m = useMutation({
    ...updateTenantMutation(),
    onMutate: () => setSaved(null),
    onSuccess: async (t) => {
      queryClient.setQueryData(getTenantQueryKey({ path: { tenant_id: tenant.tenant_id } }), t);
      setSaved(done);
      await invalidateTenantReads(queryClient);
    },
  });
  return {
    ...m,
    saved,
    send: (body: UpdateTenantRequest, onSaved?: () => void) => m.mutate({ path: { tenant_id: tenant.tenant_id }, body }, { onSuccess: () => onSaved?.() }),
  };
}

function Section({ title, children }: { title: string; children: ReactNode }) {
  const id = useId();
  return (
    <section aria-labelledby={id} className="tenant-section">
      <h2 id={id}>{title}</h2>
      {children}
    </section>
  );
}

export function ApproveNotice({ tenant }: { tenant: Tenant }) {
  const u = useUpdate(tenant, `Tenant ${tenant.name} approved: its members can use it now.`);
  if (tenant.status !== 'pending_approval') return <SuccessNotice>{u.saved}</SuccessNotice>;
  return (
    <div className="notice">
      <p>
        <strong>Waiting for approval.</strong> This tenant registered itself; its members cannot use it until a platform admin approves it.
      </p>
      <button type="button" className="primary" disabled={u.isPending} onClick={() => u.send({ status: 'active' })}>
        {u.isPending ? 'Approving…' : 'Approve this tenant'}
      </button>
      <ErrorNotice error={u.error} title="The tenant was not approved" />
    </div>
  );
}

export function DetailsForm({ tenant }: { tenant: Tenant }) {
  const id = useId();
  const u = useUpdate(tenant, 'Details saved.');
  // A field holds null until the person edits it, so it shows the tenant as last read (an
  // approval elsewhere on the page is never sent back as the old status).
  const [name, setName] = useState<string | null>(null);
  const [slug, setSlug] = useState<string | null>(null);
  const [status, setStatus] = useState<TenantStatus | null>(null);
  const [settings, setSettings] = useState<string | null>(null);
  const [problems, setProblems] = useState<string[]>([]);
  const shown = {
    name: name ?? tenant.name,
    slug: slug ?? tenant.slug,
    status: status ?? tenant.status,
    settings: settings ?? JSON.stringify(tenant.settings, null, 2),
  };
  function submit(e: FormEvent) {
    e.preventDefault();
    const found: string[] = [];
    if (shown.name.trim() === '') found.push('Enter a name.');
    const sp = slugProblem(shown.slug);
    if (sp) found.push(sp);
    const parsed = parseSettings(shown.settings);
    if ('problem' in parsed) found.push(parsed.problem);
    setProblems(found);
    if (found.length || 'problem' in parsed) return;
    const body: UpdateTenantRequest = {};
    if (settings !== null) body.settings = parsed.value;
    if (shown.name.trim() !== tenant.name) body.name = shown.name.trim();
    if (shown.slug !== tenant.slug) body.slug = shown.slug;
    // Suspension and scheduled deletion have their own actions: this field moves only between the settable statuses.
    if (shown.status !== tenant.status && isSettable(shown.status)) body.status = shown.status;
    u.send(body, () => {
      setName(null);
      setSlug(null);
      setStatus(null);
      setSettings(null);
    });
  }
  return (
    <Section title="Details">
      <form onSubmit={submit} noValidate>
        <Problems list={problems} />
        <div className="field">
          <label htmlFor={`${id}-name`}>Name</label>
          <input id={`${id}-name`} value={shown.name} maxLength={255} onChange={(e) => setName(e.target.value)} />
        </div>
        <div className="field">
          <label htmlFor={`${id}-slug`}>Slug</label>
          <input id={`${id}-slug`} value={shown.slug} maxLength={255} spellCheck={false} autoComplete="off" onChange={(e) => setSlug(e.target.value)} aria-describedby={`${id}-slug-hint`} />
          <span className="hint" id={`${id}-slug-hint`}>
            Changing it breaks every caller that still sends the old slug as X-Tenant.
          </span>
        </div>
        {isSettable(tenant.status) && (
        <div className="field">
          <label htmlFor={`${id}-status`}>Status</label>
          <select id={`${id}-status`} value={shown.status} onChange={(e) => setStatus(e.target.value as TenantStatus)}>
            {SETTABLE_STATUSES.map((s) => (
              <option key={s} value={s}>
                {statusLabel(s)}
              </option>
            ))}
          </select>
        </div>
        )}
        <div className="field">
          <label htmlFor={`${id}-settings`}>Settings (JSON object)</label>
          <textarea id={`${id}-settings`} value={shown.settings} spellCheck={false} onChange={(e) => setSettings(e.target.value)} aria-describedby={`${id}-settings-hint`} />
          <span className="hint" id={`${id}-settings-hint`}>
            Saving replaces the stored settings with this object.
          </span>
        </div>
        <button type="submit" className="primary" disabled={u.isPending}>
          {u.isPending ? 'Saving…' : 'Save details'}
        </button>
        <ErrorNotice error={u.error} title="The details were not saved" />
        <SuccessNotice>{u.saved}</SuccessNotice>
      </form>
    </Section>
  );
}

export function PolicyForm({ tenant }: { tenant: Tenant }) {
  const u = useUpdate(tenant, 'Membership policy saved.');
  const p = tenant.membership_policy;
  const [edited, setDraft] = useState<PolicyDraft | null>(null);
  const draft = edited ?? { provisionFromClaims: p.provision_from_claims, claimsIssuer: p.claims_issuer ?? '', rolesFromClaims: p.roles_from_claims === true };
  return (
    <Section title="Membership policy">
      <form
        onSubmit={(e) => {
          e.preventDefault();
          u.send({ membership_policy: policyInput(draft) }, () => setDraft(null));
        }}
      >
        <MembershipPolicyFields value={draft} onChange={setDraft} />
        <button type="submit" className="primary" disabled={u.isPending}>
          {u.isPending ? 'Saving…' : 'Save membership policy'}
        </button>
        <ErrorNotice error={u.error} title="The membership policy was not saved" />
        <SuccessNotice>{u.saved}</SuccessNotice>
      </form>
    </Section>
  );
}

export function LinksForm({ tenant }: { tenant: Tenant }) {
  const u = useUpdate(tenant, 'Identity links saved.');
  const [edited, setLinks] = useState<IdentityLink[] | null>(null);
  const links = edited ?? tenant.identity_links ?? [];
  const [problems, setProblems] = useState<string[]>([]);
  return (
    <Section title="Identity links">
      <p className="hint">An organization of an identity provider that names this tenant: a token from that issuer carrying that organization ID opens it.</p>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          const l = completeLinks(links);
          setProblems('problem' in l ? [l.problem] : []);
          if (!('problem' in l)) u.send({ identity_links: l.value }, () => setLinks(null));
        }}
      >
        <Problems list={problems} />
        <IdentityLinksEditor links={links} onChange={setLinks} />
        <p>
          <button type="submit" className="primary" disabled={u.isPending}>
            {u.isPending ? 'Saving…' : 'Save identity links'}
          </button>
        </p>
        <ErrorNotice error={u.error} title="The identity links were not saved" />
        <SuccessNotice>{u.saved}</SuccessNotice>
      </form>
    </Section>
  );
}

export { Section };
