/**
 * /tenant/domains (tenant admins): the tenant's verified domains (docs/domains.md). Claim a
 * domain (claimDomain), publish the TXT record shown with copy buttons, press Verify
 * (verifyDomain: a refusal names the record asked for and what DNS answered), set who joins by
 * it (updateDomain), remove it (removeDomain).
 */
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useId, useState, type FormEvent } from 'react';
import { claimDomainMutation, listDomainsOptions, removeDomainMutation, updateDomainMutation, verifyDomainMutation } from '@generated/@tanstack/react-query.gen';
import type { Domain } from '@generated/types.gen';
import { CopyField } from '../../components/CopyField';
import { ErrorNotice, SuccessNotice } from '../../components/ErrorNotice';
import { Loading, Page } from '../../components/Page';
import { Time } from '../../components/Time';
import { RoleSelect } from '../../components/tenant/RoleSelect';
import { invalidateOperations } from '../../components/tenant/queries';
import { useSession } from '../../session';

const READS = ['listDomains', 'listTenantEvents'] as const;
type Join = Domain['join'];

const STATUS: Record<Domain['status'], string> = {
  pending: 'Pending: publish the record, then verify',
  verified: 'Verified',
  lapsed: 'Lapsed: the record was missing at three daily checks; verify again',
};

function DomainCard({ d }: { d: Domain }) {
  const s = useSession();
  const id = useId();
  const queryClient = useQueryClient();
  const [join, setJoin] = useState<Join>(d.join);
  const [role, setRole] = useState(d.join_role);
  const [said, setSaid] = useState<string | null>(null);
  const refresh = () => invalidateOperations(queryClient, ...READS);
  const path = { domain: d.domain_ascii };
  const verify = useMutation({ ...verifyDomainMutation(), onMutate: () => setSaid(null), onSuccess: async () => (setSaid(`${d.domain} is verified.`), await refresh()) });
  const update = useMutation({ ...updateDomainMutation(), onMutate: () => setSaid(null), onSuccess: async () => (setSaid(`Joining by ${d.domain} saved.`), await refresh()) });
  const remove = useMutation({ ...removeDomainMutation(), onSuccess: refresh });
  function save(e: FormEvent) {
    e.preventDefault();
    update.mutate({ headers: s.tenantHeaders, path, body: { join, join_role: role } });
  }
  return (
    <section aria-labelledby={`${id}-h`}>
      <h2 id={`${id}-h`}>{d.domain}</h2>
      <p>
        <strong>{STATUS[d.status]}</strong>
        {d.checked_at ? (
          <>
            {' '}
            (DNS last asked <Time value={d.checked_at} />)
          </>
        ) : null}
      </p>
      {d.status !== 'verified' ? (
        <>
          <p className="hint">Add this TXT record at your DNS provider, wait for it to be published, then press Verify.</p>
          <CopyField label={`Record name for ${d.domain}`} value={d.verification.name} copyLabel={`Copy the record name for ${d.domain}`} />
          <CopyField label={`Record value for ${d.domain}`} value={d.verification.value} copyLabel={`Copy the record value for ${d.domain}`} hint="Type TXT; the value exactly as shown." />
          <p>
            <button type="button" className="primary" disabled={verify.isPending} onClick={() => verify.mutate({ headers: s.tenantHeaders, path })}>
              {verify.isPending ? 'Asking DNS…' : `Verify ${d.domain}`}
            </button>
          </p>
        </>
      ) : null}
      <ErrorNotice error={verify.error} title="Not verified" />
      <form onSubmit={save}>
        <div className="form-row">
          <div className="field">
            <label htmlFor={`${id}-join`}>People with a verified email at {d.domain}</label>
            <select id={`${id}-join`} value={join} onChange={(e) => setJoin(e.target.value as Join)}>
              <option value="none">do not join by this domain</option>
              <option value="suggest">may join (they see the tenant and ask to join)</option>
              <option value="automatic">join automatically at their first sign-in</option>
            </select>
          </div>
          <RoleSelect id={`${id}-role`} value={role} onChange={setRole} label="Role they get" />
          <button type="submit" disabled={update.isPending}>
            Save joining
          </button>
        </div>
        <p className="hint">Only a verified domain admits anyone. The role is never admin: a DNS record proves control of a domain, not a decision about a person.</p>
      </form>
      <ErrorNotice error={update.error} title="Not saved" />
      {said ? <SuccessNotice>{said}</SuccessNotice> : null}
      <p>
        <button type="button" className="danger" disabled={remove.isPending} onClick={() => remove.mutate({ headers: s.tenantHeaders, path })}>
          Remove {d.domain}
        </button>
      </p>
      <ErrorNotice error={remove.error} title="Not removed" />
    </section>
  );
}

export default function Domains() {
  const s = useSession();
  const id = useId();
  const queryClient = useQueryClient();
  const [domain, setDomain] = useState('');
  const list = useQuery(listDomainsOptions({ headers: s.tenantHeaders }));
  const claim = useMutation({
    ...claimDomainMutation(),
    onSuccess: async () => {
      setDomain('');
      await invalidateOperations(queryClient, ...READS);
    },
  });
  function submit(e: FormEvent) {
    e.preventDefault();
    claim.mutate({ headers: s.tenantHeaders, body: { domain: domain.trim() } });
  }
  const domains = list.data?.domains ?? [];
  return (
    <Page title="Domains">
      <p className="hint">
        Prove that your organization owns its email domain: people with a verified email there can then join this tenant, and sign-ins from it find this tenant.
      </p>
      <form onSubmit={submit}>
        <div className="form-row">
          <div className="field">
            <label htmlFor={`${id}-d`}>Domain</label>
            <input id={`${id}-d`} value={domain} required maxLength={253} autoComplete="off" placeholder="acme.com" onChange={(e) => setDomain(e.target.value)} />
          </div>
          <button type="submit" className="primary" disabled={claim.isPending}>
            Add domain
          </button>
        </div>
      </form>
      <ErrorNotice error={claim.error} title="Not added" />
      {list.isPending ? <Loading what="the domains" /> : null}
      <ErrorNotice error={list.error} />
      {list.data && domains.length === 0 ? <p>No domains yet.</p> : null}
      {domains.map((d) => (
        <DomainCard key={d.domain_ascii} d={d} />
      ))}
    </Page>
  );
}
