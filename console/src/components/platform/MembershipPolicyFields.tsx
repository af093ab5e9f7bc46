/**
 * The membership policy's three fields (who may join without an invitation:
 * docs/tenants.md#membership), as
 * labelled controls with what each one means. Controlled by the parent form.
 */
import { useId } from 'react';

export interface PolicyDraft {
  provisionFromClaims: boolean;
  claimsIssuer: string;
  rolesFromClaims: boolean;
}

export function MembershipPolicyFields({ value, onChange }: { value: PolicyDraft; onChange: (v: PolicyDraft) => void }) {
  const id = useId();
  return (
    <>
      <div className="field">
        <span>
          <input
            id={`${id}-prov`}
            type="checkbox"
            checked={value.provisionFromClaims}
            onChange={(e) => onChange({ ...value, provisionFromClaims: e.target.checked })}
            aria-describedby={`${id}-prov-hint`}
          />{' '}
          <label htmlFor={`${id}-prov`}>Let a token that names this tenant make its holder a member</label>
        </span>
        <span className="hint" id={`${id}-prov-hint`}>
          Off: people join only by invitation or when an admin adds them.
        </span>
      </div>
      <div className="field">
        <label htmlFor={`${id}-iss`}>Only tokens from this issuer</label>
        <input
          id={`${id}-iss`}
          type="url"
          value={value.claimsIssuer}
          onChange={(e) => onChange({ ...value, claimsIssuer: e.target.value })}
          placeholder="https://idp.example.com/"
          aria-describedby={`${id}-iss-hint`}
        />
        <span className="hint" id={`${id}-iss-hint`}>
          Empty: any issuer the service trusts.
        </span>
      </div>
      <div className="field">
        <span>
          <input
            id={`${id}-roles`}
            type="checkbox"
            checked={value.rolesFromClaims}
            onChange={(e) => onChange({ ...value, rolesFromClaims: e.target.checked })}
            aria-describedby={`${id}-roles-hint`}
          />{' '}
          <label htmlFor={`${id}-roles`}>Take each member&apos;s role from the token&apos;s role claim</label>
        </span>
        <span className="hint" id={`${id}-roles-hint`}>
          On every request, the claim &quot;admin&quot; makes the caller an admin and anything else a member.
        </span>
      </div>
    </>
  );
}

export function policyInput(v: PolicyDraft) {
  return { provision_from_claims: v.provisionFromClaims, claims_issuer: v.claimsIssuer.trim() === '' ? null : v.claimsIssuer.trim(), roles_from_claims: v.rolesFromClaims };
}
