/**
 * Editing a tenant's identity links (issuer + organization ID pairs of an identity provider that
 * name the tenant): one labelled row per link, add and remove buttons. Controlled by the parent
 * form, which sends the list as `identity_links`.
 */
import { useId } from 'react';
import type { IdentityLink } from '@generated/types.gen';

export function IdentityLinksEditor({ links, onChange }: { links: IdentityLink[]; onChange: (links: IdentityLink[]) => void }) {
  const id = useId();
  const set = (i: number, patch: Partial<IdentityLink>) => onChange(links.map((l, j) => (j === i ? { ...l, ...patch } : l)));
  return (
    <div>
      {links.length === 0 ? <p className="hint">No identity link: the tenant is named by its slug in a token claim, or by invitation.</p> : null}
      {links.map((l, i) => (
        <div className="form-row" key={i}>
          <div className="field">
            <label htmlFor={`${id}-iss-${i}`}>Issuer of link {i + 1}</label>
            <input id={`${id}-iss-${i}`} type="url" value={l.issuer} onChange={(e) => set(i, { issuer: e.target.value })} placeholder="https://idp.example.com/" />
          </div>
          <div className="field">
            <label htmlFor={`${id}-org-${i}`}>Organization ID of link {i + 1}</label>
            <input id={`${id}-org-${i}`} value={l.organization_id} onChange={(e) => set(i, { organization_id: e.target.value })} />
          </div>
          <button type="button" onClick={() => onChange(links.filter((_, j) => j !== i))}>
            Remove link {i + 1}
          </button>
        </div>
      ))}
      <button type="button" onClick={() => onChange([...links, { issuer: '', organization_id: '' }])}>
        Add an identity link
      </button>
    </div>
  );
}

/** The links a person filled in (blank rows dropped), or the sentence saying what is missing. */
export function completeLinks(links: IdentityLink[]): { value: IdentityLink[] } | { problem: string } {
  const filled = links.map((l) => ({ issuer: l.issuer.trim(), organization_id: l.organization_id.trim() })).filter((l) => l.issuer || l.organization_id);
  const i = filled.findIndex((l) => !l.issuer || !l.organization_id);
  if (i >= 0) return { problem: `Identity link ${i + 1} needs both an issuer and an organization ID.` };
  return { value: filled };
}
