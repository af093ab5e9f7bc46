/**
 * Platform admins: create a tenant (name, slug, settings, sample data, membership policy,
 * identity links). Mistakes are said as sentences before anything is sent; the service's own
 * refusals (a taken slug, a linked organization) as its sentence. A retried submit sends the same
 * Idempotency-Key, so it never creates a second tenant. Success opens the new tenant's page.
 * Operations: createTenant.
 */
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useId, useState, type FormEvent } from 'react';
import { createTenantMutation } from '@generated/@tanstack/react-query.gen';
import type { IdentityLink } from '@generated/types.gen';
import { ErrorNotice } from '../../components/ErrorNotice';
import { Page } from '../../components/Page';
import { setFlash } from '../../components/platform/flash';
import { completeLinks, IdentityLinksEditor } from '../../components/platform/IdentityLinksEditor';
import { MembershipPolicyFields, policyInput, type PolicyDraft } from '../../components/platform/MembershipPolicyFields';
import { invalidateTenantReads, parseSettings, slugFromName, slugProblem } from '../../components/platform/tenant-forms';
import { Link, navigate } from '../../router';

function newIdempotencyKey(): string {
  return Array.from(crypto.getRandomValues(new Uint8Array(16)), (b) => b.toString(16).padStart(2, '0')).join('');
}

export default function NewTenant() {
  const id = useId();
  const queryClient = useQueryClient();
  const [name, setName] = useState('');
  const [slug, setSlug] = useState('');
  const [slugEdited, setSlugEdited] = useState(false);
  const [settings, setSettings] = useState('{}');
  const [sample, setSample] = useState(false);
  const [policy, setPolicy] = useState<PolicyDraft>({ provisionFromClaims: true, claimsIssuer: '', rolesFromClaims: false });
  const [links, setLinks] = useState<IdentityLink[]>([]);
  const [problems, setProblems] = useState<string[]>([]);
  // One key per filled-in form: a second click after a lost answer replays, it does not duplicate.
  const [idempotencyKey, setIdempotencyKey] = useState(newIdempotencyKey);
  const create = useMutation({
    ...createTenantMutation(),
    onSuccess: async (r) => {
      setFlash(r.existing ? `Tenant ${r.name} had already been created by this form; here it is.` : `Tenant ${r.name} created.`);
      await invalidateTenantReads(queryClient);
      navigate(`/admin/tenants/${r.tenant_id}`);
    },
  });

  function submit(e: FormEvent) {
    e.preventDefault();
    const found: string[] = [];
    if (name.trim() === '') found.push('Enter a name.');
    const sp = slugProblem(slug);
    if (sp) found.push(sp);
    const parsed = parseSettings(settings);
    if ('problem' in parsed) found.push(parsed.problem);
    const l = completeLinks(links);
    if ('problem' in l) found.push(l.problem);
    setProblems(found);
    if (found.length || 'problem' in parsed || 'problem' in l) return;
    create.mutate({
      headers: { 'Idempotency-Key': idempotencyKey },
      body: {
        name: name.trim(),
        slug,
        settings: parsed.value,
        include_sample_data: sample,
        membership_policy: policyInput(policy),
        ...(l.value.length ? { identity_links: l.value } : {}),
      },
    });
  }

  // Any change after a refusal is a new request, with a key of its own.
  const edited = <T,>(set: (v: T) => void) => (v: T) => {
    set(v);
    if (create.isError) {
      create.reset();
      setIdempotencyKey(newIdempotencyKey());
    }
  };

  return (
    <Page title="Create a tenant">
      <p>
        <Link to="/admin/tenants">Back to all tenants</Link>
      </p>
      {problems.length ? (
        <div className="notice notice-error" role="alert">
          <p>
            <strong>The tenant was not created</strong>:
          </p>
          <ul>
            {problems.map((p) => (
              <li key={p}>{p}</li>
            ))}
          </ul>
        </div>
      ) : null}
      <ErrorNotice error={create.error} title="The tenant was not created" />
      <form onSubmit={submit} noValidate>
        <div className="field">
          <label htmlFor={`${id}-name`}>Name</label>
          <input
            id={`${id}-name`}
            value={name}
            required
            maxLength={255}
            onChange={(e) => {
              edited(setName)(e.target.value);
              if (!slugEdited) setSlug(slugFromName(e.target.value));
            }}
          />
        </div>
        <div className="field">
          <label htmlFor={`${id}-slug`}>Slug</label>
          <input
            id={`${id}-slug`}
            value={slug}
            required
            maxLength={255}
            spellCheck={false}
            autoComplete="off"
            aria-describedby={`${id}-slug-hint`}
            onChange={(e) => {
              setSlugEdited(true);
              edited(setSlug)(e.target.value);
            }}
          />
          <span className="hint" id={`${id}-slug-hint`}>
            Lowercase letters, digits and hyphens; callers name the tenant with it (X-Tenant).
          </span>
        </div>
        <div className="field">
          <label htmlFor={`${id}-settings`}>Settings (JSON object)</label>
          <textarea id={`${id}-settings`} value={settings} onChange={(e) => edited(setSettings)(e.target.value)} spellCheck={false} aria-describedby={`${id}-settings-hint`} />
          <span className="hint" id={`${id}-settings-hint`}>
            For example {'{"admin_email": "ops@acme.test", "billing_plan": "free", "features": []}'}.
          </span>
        </div>
        <div className="field">
          <span>
            <input id={`${id}-sample`} type="checkbox" checked={sample} onChange={(e) => edited(setSample)(e.target.checked)} />{' '}
            <label htmlFor={`${id}-sample`}>Include sample data</label>
          </span>
        </div>
        <fieldset>
          <legend>Membership policy</legend>
          <MembershipPolicyFields value={policy} onChange={edited(setPolicy)} />
        </fieldset>
        <fieldset>
          <legend>Identity links</legend>
          <IdentityLinksEditor links={links} onChange={edited(setLinks)} />
        </fieldset>
        <button type="submit" className="primary" disabled={create.isPending}>
          {create.isPending ? 'Creating…' : 'Create the tenant'}
        </button>
      </form>
    </Page>
  );
}
