/**
 * /register: registering an organization (registerTenant), after the rules of this service
 * (getRegistrationStatus): open or not, approval required, allowed domains, the per-person
 * limit. Every refusal is a sentence with advice; on success the person's tenants are reloaded
 * and an active tenant becomes the current one.
 */
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useId, useState, type FormEvent } from 'react';
import { getRegistrationStatusOptions, registerTenantMutation } from '@generated/@tanstack/react-query.gen';
import type { RegisterTenantRequest, RegistrationStatus } from '@generated/types.gen';
import { localProblem } from '../../api';
import { ErrorNotice } from '../../components/ErrorNotice';
import { Loading, Page } from '../../components/Page';
import { RegistrationErrorNotice } from '../../components/tenant/RegistrationErrorNotice';
import { RegistrationResultView } from '../../components/tenant/RegistrationResultView';
import { Outcome } from '../../components/tenant/Outcome';
import { invalidateOperations } from '../../components/tenant/queries';
import { useSession } from '../../session';

type Size = NonNullable<RegisterTenantRequest['organization_size']>;
const SIZES: Size[] = ['small', 'medium', 'large', 'enterprise'];

function Rules({ rules }: { rules: RegistrationStatus }) {
  return (
    <section aria-labelledby="registration-rules">
      <h2 id="registration-rules">How registration works here</h2>
      <ul>
        <li>{rules.enabled ? 'Registration is open.' : 'Registration is closed: this service runs a single tenant.'}</li>
        {rules.enabled ? (
          <li>
            {rules.requires_approval
              ? 'A new organization waits for a platform admin to approve it before it can be used.'
              : 'A new organization can be used at once.'}
          </li>
        ) : null}
        {rules.enabled && rules.allowed_domains?.length ? (
          <li>Only addresses at {rules.allowed_domains.join(', ')}: both the admin email and the verified email of your sign-in.</li>
        ) : null}
        {rules.enabled && rules.max_tenants_per_user ? <li>Each person may register at most {rules.max_tenants_per_user}.</li> : null}
      </ul>
    </section>
  );
}

export default function Register() {
  const s = useSession();
  const queryClient = useQueryClient();
  const id = useId();
  const rules = useQuery(getRegistrationStatusOptions());
  const [name, setName] = useState('');
  const [slug, setSlug] = useState('');
  const [adminEmail, setAdminEmail] = useState(s.identity?.email ?? '');
  const [adminName, setAdminName] = useState(s.identity?.name ?? '');
  const [useCase, setUseCase] = useState('');
  const [size, setSize] = useState<Size | ''>('');
  const [sample, setSample] = useState(false);
  const [metadata, setMetadata] = useState('');
  const [invalid, setInvalid] = useState<string | null>(null);
  const [outcomes, setOutcomes] = useState(0);
  const register = useMutation({
    ...registerTenantMutation(),
    onSuccess: async (result) => {
      await invalidateOperations(queryClient, 'listMyTenants');
      if (result.status === 'active') s.selectTenant(result.tenant_slug);
      setOutcomes((n) => n + 1);
    },
    onError: () => setOutcomes((n) => n + 1),
  });

  function submit(e: FormEvent) {
    e.preventDefault();
    let meta: Record<string, unknown> | undefined;
    if (metadata.trim()) {
      try {
        const parsed: unknown = JSON.parse(metadata);
        if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new Error('not an object');
        meta = parsed as Record<string, unknown>;
      } catch {
        setInvalid('Metadata must be a JSON object, such as {"plan": "trial"}, or empty.');
        setOutcomes((n) => n + 1);
        return;
      }
    }
    setInvalid(null);
    register.mutate({
      body: {
        organization_name: name,
        admin_email: adminEmail.trim(),
        ...(slug.trim() ? { organization_slug: slug.trim() } : {}),
        ...(adminName.trim() ? { admin_name: adminName.trim() } : {}),
        ...(useCase.trim() ? { use_case: useCase.trim() } : {}),
        ...(size ? { organization_size: size } : {}),
        ...(meta ? { metadata: meta } : {}),
        ...(sample ? { include_sample_data: true } : {}),
      },
    });
  }

  return (
    <Page title="Register an organization">
      {rules.isPending ? <Loading what="the registration rules" /> : null}
      <ErrorNotice error={rules.error} />
      {rules.data ? <Rules rules={rules.data} /> : null}
      <Outcome version={outcomes}>
        {register.data ? <RegistrationResultView result={register.data} /> : null}
        {invalid ? <ErrorNotice error={localProblem('Invalid metadata', invalid)} /> : null}
        <RegistrationErrorNotice error={register.error} rules={rules.data} />
      </Outcome>
      {rules.data?.enabled && !register.data ? (
        <form onSubmit={submit} aria-labelledby={`${id}-h`}>
          <h2 id={`${id}-h`}>Your organization</h2>
          <div className="field">
            <label htmlFor={`${id}-name`}>Organization name</label>
            <input id={`${id}-name`} required value={name} onChange={(e) => setName(e.target.value)} autoComplete="organization" />
          </div>
          <div className="field">
            <label htmlFor={`${id}-slug`}>Slug (optional)</label>
            <input
              id={`${id}-slug`}
              value={slug}
              onChange={(e) => setSlug(e.target.value)}
              pattern="[a-z0-9\-]+"
              maxLength={255}
              autoComplete="off"
              spellCheck={false}
              aria-describedby={`${id}-slug-hint`}
            />
            <span id={`${id}-slug-hint`} className="hint">
              Lowercase letters, digits and hyphens; it names the tenant in the X-Tenant header. Leave it empty to make one from the name.
            </span>
          </div>
          <div className="field">
            <label htmlFor={`${id}-email`}>Admin email</label>
            <input id={`${id}-email`} type="email" required value={adminEmail} onChange={(e) => setAdminEmail(e.target.value)} autoComplete="email" />
          </div>
          <div className="field">
            <label htmlFor={`${id}-admin-name`}>Admin name (optional)</label>
            <input id={`${id}-admin-name`} value={adminName} onChange={(e) => setAdminName(e.target.value)} autoComplete="name" />
          </div>
          <div className="field">
            <label htmlFor={`${id}-size`}>Organization size (optional)</label>
            <select id={`${id}-size`} value={size} onChange={(e) => setSize(e.target.value as Size | '')}>
              <option value="">Not said</option>
              {SIZES.map((z) => (
                <option key={z} value={z}>
                  {z}
                </option>
              ))}
            </select>
          </div>
          <div className="field">
            <label htmlFor={`${id}-use`}>What you will use it for (optional)</label>
            <textarea id={`${id}-use`} value={useCase} onChange={(e) => setUseCase(e.target.value)} />
          </div>
          <div className="field">
            <label htmlFor={`${id}-meta`}>Metadata (optional JSON object)</label>
            <textarea id={`${id}-meta`} value={metadata} onChange={(e) => setMetadata(e.target.value)} spellCheck={false} />
          </div>
          <div className="field">
            <label>
              <input type="checkbox" checked={sample} onChange={(e) => setSample(e.target.checked)} /> Include sample data
            </label>
          </div>
          <button type="submit" className="primary" disabled={register.isPending}>
            {register.isPending ? 'Registering…' : 'Register'}
          </button>
        </form>
      ) : null}
    </Page>
  );
}
