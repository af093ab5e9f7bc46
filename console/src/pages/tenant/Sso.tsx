/**
 * /tenant/sso (holders of tenant:sso:manage): the tenant's own single sign-on (docs/sso.md). Add
 * an OIDC or SAML connection (createSsoConnection), copy the values to register at the identity
 * provider (redirect URI; SP entity id, ACS URL, metadata URL), activate / deactivate or delete
 * a connection (updateSsoConnection, deleteSsoConnection), require SSO (updateSsoSettings).
 */
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useId, useState, type FormEvent } from 'react';
import {
  createSsoConnectionMutation,
  deleteSsoConnectionMutation,
  getSsoSettingsOptions,
  listSsoConnectionsOptions,
  updateSsoConnectionMutation,
  updateSsoSettingsMutation,
} from '@generated/@tanstack/react-query.gen';
import type { CreateSsoConnectionRequestWritable, SsoConnection } from '@generated/types.gen';
import { CopyField } from '../../components/CopyField';
import { ErrorNotice, SuccessNotice } from '../../components/ErrorNotice';
import { Loading, Page } from '../../components/Page';
import { invalidateOperations } from '../../components/tenant/queries';
import { useSession } from '../../session';

const READS = ['listSsoConnections', 'getSsoSettings', 'listTenantEvents'] as const;

function ConnectionCard({ c }: { c: SsoConnection }) {
  const s = useSession();
  const id = useId();
  const queryClient = useQueryClient();
  const refresh = () => invalidateOperations(queryClient, ...READS);
  const path = { connection_id: c.connection_id };
  const update = useMutation({ ...updateSsoConnectionMutation(), onSuccess: refresh });
  const remove = useMutation({ ...deleteSsoConnectionMutation(), onSuccess: refresh });
  const next = c.status === 'active' ? 'inactive' : 'active';
  return (
    <section aria-labelledby={`${id}-h`}>
      <h2 id={`${id}-h`}>{c.name}</h2>
      <p>
        <strong>{c.type === 'oidc' ? 'OpenID Connect' : 'SAML 2.0'}</strong>, {c.status === 'active' ? 'active' : 'inactive: nobody is sent to it'}
        {c.type === 'oidc' ? ` — issuer ${c.issuer}, client ${c.client_id}` : ` — identity provider ${c.idp_entity_id}`}
      </p>
      {c.type === 'oidc' ? (
        <CopyField label={`Redirect URI for ${c.name}`} value={c.redirect_uri ?? ''} copyLabel={`Copy the redirect URI for ${c.name}`} hint="Register it exactly at the identity provider (a web application's sign-in redirect URI)." />
      ) : (
        <>
          <CopyField label={`SP entity ID for ${c.name}`} value={c.sp_entity_id ?? ''} copyLabel={`Copy the SP entity ID for ${c.name}`} hint="The identifier (Audience) of this service at your identity provider." />
          <CopyField label={`ACS URL for ${c.name}`} value={c.acs_url ?? ''} copyLabel={`Copy the ACS URL for ${c.name}`} hint="The reply URL (Assertion Consumer Service, HTTP-POST)." />
          <CopyField label={`SP metadata URL for ${c.name}`} value={c.sp_metadata_url ?? ''} copyLabel={`Copy the SP metadata URL for ${c.name}`} hint="Or give your identity provider this metadata URL." />
          {c.idp_certificate ? <p className="hint">Signing certificate {c.idp_certificate.subject}, valid until {c.idp_certificate.not_after.slice(0, 10)}, SHA-256 {c.idp_certificate.fingerprint_sha256}</p> : null}
        </>
      )}
      <p>
        <button type="button" disabled={update.isPending} onClick={() => update.mutate({ headers: s.tenantHeaders, path, body: { status: next } })}>
          {next === 'active' ? `Activate ${c.name}` : `Deactivate ${c.name}`}
        </button>{' '}
        <button type="button" className="danger" disabled={remove.isPending} onClick={() => remove.mutate({ headers: s.tenantHeaders, path })}>
          Delete {c.name}
        </button>
      </p>
      <ErrorNotice error={update.error} title="Not changed" />
      <ErrorNotice error={remove.error} title="Not deleted" />
    </section>
  );
}

function AddConnection() {
  const s = useSession();
  const id = useId();
  const queryClient = useQueryClient();
  const [type, setType] = useState<'oidc' | 'saml'>('oidc');
  const [f, setF] = useState({ name: '', issuer: '', client_id: '', client_secret: '', scopes: '', metadata: '' });
  const create = useMutation({
    ...createSsoConnectionMutation(),
    onSuccess: async () => {
      setF({ name: '', issuer: '', client_id: '', client_secret: '', scopes: '', metadata: '' });
      await invalidateOperations(queryClient, ...READS);
    },
  });
  const field = (key: keyof typeof f, label: string, extra: { type?: string; required?: boolean; placeholder?: string } = {}) => (
    <div className="field">
      <label htmlFor={`${id}-${key}`}>{label}</label>
      <input id={`${id}-${key}`} type={extra.type ?? 'text'} required={extra.required ?? true} autoComplete="off" placeholder={extra.placeholder} value={f[key]} onChange={(e) => setF({ ...f, [key]: e.target.value })} />
    </div>
  );
  function submit(e: FormEvent) {
    e.preventDefault();
    const scopes = f.scopes.split(/[\s,]+/).filter(Boolean);
    const body: CreateSsoConnectionRequestWritable =
      type === 'oidc'
        ? { type, name: f.name.trim(), issuer: f.issuer.trim(), client_id: f.client_id.trim(), client_secret: f.client_secret, ...(scopes.length ? { scopes } : {}) }
        : { type, name: f.name.trim(), idp_metadata_xml: f.metadata };
    create.mutate({ headers: s.tenantHeaders, body });
  }
  return (
    <form onSubmit={submit} aria-labelledby={`${id}-h`}>
      <h2 id={`${id}-h`}>Add a connection</h2>
      <div className="form-row">
        <div className="field">
          <label htmlFor={`${id}-type`}>Protocol</label>
          <select id={`${id}-type`} value={type} onChange={(e) => setType(e.target.value as 'oidc' | 'saml')}>
            <option value="oidc">OpenID Connect (Okta, Entra ID, Google …)</option>
            <option value="saml">SAML 2.0 (ADFS, Entra ID, Okta …)</option>
          </select>
        </div>
        {field('name', 'Connection name', { placeholder: 'Okta' })}
      </div>
      {type === 'oidc' ? (
        <div className="form-row">
          {field('issuer', 'Issuer URL', { placeholder: 'https://acme.okta.com' })}
          {field('client_id', 'Client ID')}
          {field('client_secret', 'Client secret', { type: 'password' })}
          {field('scopes', 'Scopes (optional)', { required: false, placeholder: 'openid email profile' })}
        </div>
      ) : (
        <div className="field">
          <label htmlFor={`${id}-metadata`}>Identity provider metadata (XML)</label>
          <textarea id={`${id}-metadata`} required rows={6} value={f.metadata} onChange={(e) => setF({ ...f, metadata: e.target.value })} />
        </div>
      )}
      <p className="hint">The values to register at your identity provider appear on the connection once it is added. The client secret is stored encrypted and never shown again.</p>
      <button type="submit" className="primary" disabled={create.isPending}>
        {create.isPending ? 'Adding…' : 'Add connection'}
      </button>
      <ErrorNotice error={create.error} title="Not added" />
    </form>
  );
}

export default function Sso() {
  const s = useSession();
  const id = useId();
  const queryClient = useQueryClient();
  const [said, setSaid] = useState<string | null>(null);
  const list = useQuery(listSsoConnectionsOptions({ headers: s.tenantHeaders }));
  const settings = useQuery(getSsoSettingsOptions({ headers: s.tenantHeaders }));
  const require = useMutation({
    ...updateSsoSettingsMutation(),
    onMutate: () => setSaid(null),
    onSuccess: async (r) => (setSaid(r.sso_required ? 'Members now sign in only through single sign-on.' : 'Single sign-on is no longer required.'), await invalidateOperations(queryClient, ...READS)),
  });
  const connections = list.data?.connections ?? [];
  return (
    <Page title="Single sign-on">
      <p className="hint">Connect your organization's identity provider: your members then sign in with it. At most 5 connections; people are sent to the oldest active one.</p>
      {settings.data ? (
        <p>
          <input
            id={`${id}-req`}
            type="checkbox"
            checked={settings.data.sso_required}
            disabled={require.isPending}
            onChange={(e) => require.mutate({ headers: s.tenantHeaders, body: { sso_required: e.target.checked } })}
          />{' '}
          <label htmlFor={`${id}-req`}>Require single sign-on (members may not sign in by email code)</label>
        </p>
      ) : null}
      <ErrorNotice error={require.error} title="Not saved" />
      {said ? <SuccessNotice>{said}</SuccessNotice> : null}
      {list.isPending ? <Loading what="the connections" /> : null}
      <ErrorNotice error={list.error} />
      {list.data && connections.length === 0 ? <p>No connections yet.</p> : null}
      {connections.map((c) => (
        <ConnectionCard key={c.connection_id} c={c} />
      ))}
      <AddConnection />
    </Page>
  );
}
