/**
 * Switching organization without a new sign-in (docs/sign-in.md#organizations):
 * `/oidc/auth?organization=<other>&prompt=none` on a live session. The session's grant keeps the
 * tenant its sign-in chose; another tenant gets a grant of its own, made at once when the person
 * is a member there (the entry decision of the tokens, src/oidc/claims.ts), else `access_denied`.
 * A tenant requiring SSO is `login_required` (its connection must sign the person in, and
 * prompt=none never sends anyone to an identity provider). Without prompt=none the pages decide.
 */
import type { Oidc, OrganizationSwitch, SsoConnector } from '../../context/sign-in';
import { updateGrantSignIn } from '../../db/queries/oidc-payloads';
import type { Database } from '../../db/tenant-scope';
import { findOrganization } from '../../domain/sign-in/organizations';
import { admittedMembership, readGrantSignIn } from '../claims';
import { OIDC_SCOPES } from '../configuration';

export function organizationSwitch(db: Database, connector: SsoConnector | null, oidc: () => Oidc): OrganizationSwitch {
  return async (r) => {
    const tenant = await findOrganization(db, r.organization);
    if (!tenant) return r.promptNone ? { error: 'access_denied', description: 'There is no such organization.' } : 'interaction';
    const current = await readGrantSignIn(db, r.grantId);
    if (current?.tenantId === tenant.id) return 'keep';
    if (!r.promptNone) return 'interaction';
    const sso = connector ? await connector.tenantSso(tenant.id) : null;
    if (sso?.ssoRequired) return { error: 'login_required', description: 'This organization requires signing in through its single sign-on.' };
    const provider = await oidc().provider();
    const member = await admittedMembership(db, oidc().issuer, r.accountId, tenant.id);
    if (!member) return { error: 'access_denied', description: 'The person is not a member of this organization.' };
    const scope = r.scope
      .split(' ')
      .filter((s) => (OIDC_SCOPES as readonly string[]).includes(s))
      .join(' ');
    const grant = new provider.Grant({ accountId: r.accountId, clientId: r.clientId });
    grant.addOIDCScope(scope);
    grant.addResourceScope(oidc().audience, scope);
    const grantId = await grant.save();
    // Entered by membership: no connection is named (sso_connection_id is its own tenant's only).
    await updateGrantSignIn(db, grantId, { tenantId: tenant.id, connectionId: null, method: current?.method ?? 'email' });
    return { grantId };
  };
}
