/**
 * What the provider's tokens say of a person (docs/sign-in.md#tokens-it-issues): the account
 * (`sub`, `email`, `email_verified`, `name`) and, for the tenant the sign-in chose, the membership
 * of that moment (`tenant_id`, `tenant`, `tenant_role`, `permissions`, `sso_connection_id`).
 *
 * A person is a member of tenant T when T's members table holds (issuer = the provider's issuer,
 * subject = the account id). Whether they still may enter is the entry decision's answer
 * (src/tenancy/decide.ts) on the facts of one statement (src/db/queries/enter-tenant.ts), the
 * same as for any bearer token: removed, deactivated by the directory, or a tenant suspended or
 * pending deletion refuse. Nobody is made a member here.
 */
import type { AuthenticatedContext } from '../context/request';
import { readTenantFacts } from '../db/queries/enter-tenant';
import { selectGrantSignIn, type GrantSignIn } from '../db/queries/oidc-payloads';
import { selectSignInAccountAndGrant, selectSignInAccountNow, type SignInAccount } from '../db/queries/sign-in-accounts';
import type { Database } from '../db/tenant-scope';
import { decideEntry } from '../tenancy/decide';
import { decisionFacts } from '../tenancy/enter';

/** The tenant part of the claims. */
export interface TenantClaims {
  readonly tenant_id: string;
  readonly tenant: string;
  readonly tenant_role: string;
  readonly permissions: readonly string[];
  readonly sso_connection_id?: string;
}

/** Every claim the provider issues about a person in one sign-in. */
export interface PersonClaims {
  readonly sub: string;
  readonly email?: string;
  readonly email_verified?: boolean;
  readonly name?: string;
  readonly tenant?: TenantClaims;
}

export async function readAccount(db: Database, accountId: string): Promise<SignInAccount | null> {
  return selectSignInAccountNow(db, accountId);
}

export async function readGrantSignIn(db: Database, grantId: string): Promise<GrantSignIn | null> {
  return selectGrantSignIn(db, grantId);
}

/**
 * The membership of `accountId` in `tenantId` now, as a token of the provider would be admitted:
 * null when the entry decision refuses it (not a member, removed, deactivated, tenant not active).
 */
export async function admittedMembership(
  db: Database,
  issuer: string,
  accountId: string,
  tenantId: string,
): Promise<{ tenantId: string; slug: string; role: string; permissions: readonly string[] } | null> {
  const found = await readTenantFacts(db, { slug: null, tenantId, issuer, subject: accountId, roles: [], emailKey: null, emailDomains: null });
  if (!found || found.member === null) return null;
  // Only `emailVerified` is read by decisionFacts: false, so no verified domain may admit anyone here.
  const facts = decisionFacts({ caller: { emailVerified: false } } as AuthenticatedContext, found);
  // Named by id, not by a claim the tenant's policy could provision from: a stranger is refused.
  const d = decideEntry(
    { kind: 'tenant', slug: found.tenant.slug, source: 'header' },
    facts,
    { issuer, isPlatformAdmin: false, providerIssuers: [], tokenRole: null, canBindDirectoryUser: false },
    { level: 'tenantMember', permission: null, method: 'POST', path: '/oidc/token' },
  );
  if (d.kind !== 'enter' || d.provision || d.bind || d.withoutMembership) return null;
  return { tenantId: found.tenant.id, slug: found.tenant.slug, role: found.member.role, permissions: [...d.permissions].sort() };
}

/**
 * The claims of one sign-in: the account, and the tenant its grant chose. Null when the account
 * is gone, or the grant chose a tenant the person may no longer enter.
 */
export async function personClaims(db: Database, issuer: string, accountId: string, grantId: string): Promise<PersonClaims | null> {
  // The account and the grant's sign-in in one round trip.
  const { account, signIn } = await selectSignInAccountAndGrant(db, accountId, grantId);
  if (!account) return null;
  let tenant: TenantClaims | undefined;
  if (signIn?.tenantId) {
    const m = await admittedMembership(db, issuer, accountId, signIn.tenantId);
    if (!m) return null;
    tenant = {
      tenant_id: m.tenantId,
      tenant: m.slug,
      tenant_role: m.role,
      permissions: m.permissions,
      ...(signIn.connectionId ? { sso_connection_id: signIn.connectionId } : {}),
    };
  }
  return {
    sub: account.id,
    ...(account.email !== null ? { email: account.email, email_verified: account.emailVerified } : {}),
    ...(account.name !== null ? { name: account.name } : {}),
    ...(tenant ? { tenant } : {}),
  };
}

/** The claims as a flat object (ID token, JWT access token). */
export function flatClaims(c: PersonClaims): { sub: string } & Record<string, unknown> {
  const { tenant, ...rest } = c;
  return { ...rest, ...(tenant ? { ...tenant, permissions: [...tenant.permissions] } : {}) };
}
