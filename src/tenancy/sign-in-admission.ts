/**
 * Which tenant a person who signed in at the provider may enter, and the membership it makes
 * (docs/sign-in.md#who-a-connection-admits). The rule is the tenant entry's (./decide.ts) with
 * what the way in says:
 *
 * - Through a tenant's own SSO connection (`sso`): that tenant trusts its connection as it trusts
 *   its claims issuer, so a stranger is provisioned — as `member`, or with the join role of the
 *   tenant's verified domain covering their verified email — unless removed, unless a directory
 *   manages the tenant (then only an active directory user their verified email names gets in,
 *   with the role its groups give), and never while the tenant is not active.
 * - By a code sent to their email (`email`): like a request naming the tenant by header. Members
 *   enter; a stranger gets in only by a verified domain joining `automatic` (or is bound to a
 *   directory user by a verified domain of the tenant). A tenant that requires SSO refuses it.
 *
 * The membership is the `users` row of (the provider's issuer, the account id). Every outcome is
 * written to the tenant's events: `user.signed_in`, or `user.sign_in_failed` with its reason.
 */
import { MEMBER_ROLE, type RoleKey } from '../context/roles';
import type { TenantEntryFacts } from '../context/entities';
import { insertMembership, rereadTenantFacts, withTenantFacts, type TenantFactsQuery } from '../db/queries/enter-tenant';
import type { Transaction } from '../db/tenant-scope';
import { bindDirectoryUser, bindExistingMember } from '../domain/directory-binding';
import { emailDomains } from '../domain/domains/names';
import { memberData, recordEvent, type EventOrigin } from '../domain/events';
import { emailKey } from '../domain/scim/resources';
import type { SignInAccount } from '../domain/sign-in/accounts';
import { ApiError } from '../errors';
import { decideEntry, joinRoleAllowed, type EntryDecision, type TenantAccess, type TenantFacts } from './decide';
import { decisionFacts } from './enter';

export type SignInWay = { readonly method: 'sso'; readonly connectionId: string } | { readonly method: 'email' };

export type AdmissionRefusal = 'tenant_not_found' | 'tenant_unavailable' | 'removed' | 'directory_inactive' | 'not_in_directory' | 'not_member' | 'sso_required';

export type Admission =
  | { readonly kind: 'admitted'; readonly tenantId: string; readonly slug: string; readonly name: string; readonly role: RoleKey; readonly userId: string; readonly provisioned: boolean }
  | { readonly kind: 'refused'; readonly reason: AdmissionRefusal; readonly tenantId: string | null; readonly slug: string | null; readonly detail: string };

export interface AdmissionRequest {
  readonly tenantId: string;
  /** The provider's issuer: the `users.issuer` of its people. */
  readonly providerIssuer: string;
  readonly account: SignInAccount;
  readonly way: SignInWay;
  /** The tenant's `sso_required` (its SSO settings). */
  readonly ssoRequired: boolean;
  readonly origin: Omit<EventOrigin, 'actor'>;
  /** Whether to make a membership and record the outcome (false: only tell whether it would admit). */
  readonly commit: boolean;
}

const ACCESS: TenantAccess = { level: 'tenantMember', permission: null, method: 'GET', path: '/oidc/auth' };

/**
 * The entry decision for a person arriving by `way`, on the tenant's facts. Pure: the rule of
 * ./decide.ts, given the request a connection or an email code amounts to.
 */
export function decideAdmission(facts: TenantFacts, way: SignInWay, providerIssuer: string, hasVerifiedEmail: boolean): EntryDecision {
  const caller = { issuer: providerIssuer, isPlatformAdmin: false, tokenRole: null, canBindDirectoryUser: hasVerifiedEmail };
  if (way.method === 'email') {
    // A code proves an address, nothing about a tenant: entry as by header (members, automatic join).
    return decideEntry({ kind: 'tenant', slug: facts.slug, source: 'header' }, facts, { ...caller, providerIssuers: [] }, ACCESS);
  }
  // The tenant's own connection speaks for it: provisioning as from a trusted claims issuer.
  const asTrusted: TenantFacts = { ...facts, provisionFromClaims: true, claimsIssuer: providerIssuer, links: [], rolesFromClaims: false };
  const d = decideEntry({ kind: 'tenant', slug: facts.slug, source: 'tenant_claim' }, asTrusted, { ...caller, providerIssuers: [providerIssuer] }, ACCESS);
  const domain = facts.verifiedDomain ?? null;
  if (d.kind === 'enter' && d.provision && domain !== null && joinRoleAllowed(domain.joinRole, facts.rolePermissions)) {
    return { ...d, role: domain.joinRole, permissions: facts.rolePermissions[domain.joinRole]!, joinedByDomain: domain.domain };
  }
  return d;
}

/** Why the decision refused, as the event's reason code. */
function reasonOf(error: ApiError, facts: TenantFacts | null): AdmissionRefusal {
  if (!facts || error.kind === 'tenantNotFound') return 'tenant_not_found';
  if (error.kind === 'tenantSuspended' || error.kind === 'tenantPending') return 'tenant_unavailable';
  if (facts.memberRole === null && facts.removal) return 'removed';
  if (facts.memberRole !== null && facts.directoryActive === false) return 'directory_inactive';
  if (facts.memberRole === null && facts.directoryManaged) return 'not_in_directory';
  return 'not_member';
}

/** Admits the person to the tenant (making the membership the decision asks for), or says why not. */
export async function admitToTenant(db: Parameters<typeof withTenantFacts>[0], req: AdmissionRequest): Promise<Admission> {
  const { account } = req;
  const email = account.emailVerified && account.email ? account.email : null;
  const query: TenantFactsQuery = {
    slug: null,
    tenantId: req.tenantId,
    issuer: req.providerIssuer,
    subject: account.id,
    roles: [],
    emailKey: email ? emailKey(email) : null,
    emailDomains: email ? emailDomains(email) : null,
  };
  const caller = { caller: { emailVerified: email !== null } };
  const origin: EventOrigin = { ...req.origin, actor: { issuer: req.providerIssuer, subject: account.id, email: account.email, platformAdmin: false } };
  return withTenantFacts(db, query, async (first, trx) => {
    let row: TenantEntryFacts | null = first;
    if (!row) return { kind: 'refused', reason: 'tenant_not_found', tenantId: null, slug: null, detail: `Tenant '${req.tenantId}' not found.` } as const;
    const refused = async (reason: AdmissionRefusal, detail: string): Promise<Admission> => {
      if (req.commit) await recordFailure(trx, origin, row!.tenant.id, account.id, req.way, reason);
      return { kind: 'refused', reason, tenantId: row!.tenant.id, slug: row!.tenant.slug, detail };
    };
    if (req.way.method === 'email' && req.ssoRequired) {
      return refused('sso_required', `Tenant '${row.tenant.slug}' requires its members to sign in through its single sign-on.`);
    }
    let facts = decisionFacts(caller, row);
    let d = decideAdmission(facts, req.way, req.providerIssuer, email !== null);
    if (d.kind === 'refuse') return refused(reasonOf(d.error, facts), d.error.message);
    if (!req.commit) return admitted(row, d);
    const name = { issuer: req.providerIssuer, subject: account.id, name: account.name };
    if (d.bindMember) {
      // A member from before the directory, named by one of its users: the directory's from now on.
      await bindExistingMember(trx, origin, { tenantId: row.tenant.id, userId: row.member!.userId, directoryUserId: d.bindMember });
      row = (await rereadTenantFacts(trx, query))!;
      facts = decisionFacts(caller, row);
      d = decideAdmission(facts, req.way, req.providerIssuer, email !== null);
      if (d.kind === 'refuse') return refused(reasonOf(d.error, facts), d.error.message);
    }
    if (d.bind) {
      // A stranger to a directory-managed tenant: the directory user their verified email names, if any.
      await bindDirectoryUser(trx, origin, { tenantId: row.tenant.id, tenantSlug: row.tenant.slug, caller: name, email, externalId: null });
      row = (await rereadTenantFacts(trx, query))!;
      facts = decisionFacts(caller, row);
      d = decideAdmission(facts, req.way, req.providerIssuer, email !== null);
      if (d.kind === 'refuse') return refused(reasonOf(d.error, facts), d.error.message);
      if (d.bind) return refused('not_in_directory', `No active user of tenant '${row.tenant.slug}''s directory has this person's verified email.`);
    }
    let userId = row.member?.userId ?? null;
    let role = row.member?.role ?? null;
    let provisioned = false;
    if (d.provision) {
      const inserted = await insertMembership(trx, { tenantId: row.tenant.id, issuer: req.providerIssuer, subject: account.id, email: account.email, displayName: account.name, role: d.role ?? MEMBER_ROLE });
      if (!inserted) return refused('removed', `The person was removed from tenant '${row.tenant.slug}'.`);
      userId = inserted.member.userId;
      role = inserted.member.role;
      provisioned = inserted.made;
      if (inserted.made) {
        await recordEvent(trx, origin, {
          action: d.joinedByDomain ? 'member.joined_by_domain' : 'member.provisioned',
          tenantId: row.tenant.id,
          target: { type: 'member', id: userId },
          data: { member: memberData(inserted.member), source: req.way.method === 'sso' ? 'sso_connection' : 'email_sign_in', ...(d.joinedByDomain ? { domain: d.joinedByDomain, join: 'sign_in' } : {}) },
        });
      }
    }
    await recordEvent(trx, origin, {
      action: 'user.signed_in',
      tenantId: row.tenant.id,
      target: { type: 'member', id: userId },
      data: { account_id: account.id, method: req.way.method, connection_id: req.way.method === 'sso' ? req.way.connectionId : null, role, provisioned },
    });
    return { kind: 'admitted', tenantId: row.tenant.id, slug: row.tenant.slug, name: row.tenant.name, role: role!, userId: userId!, provisioned };
  });
}

function admitted(row: TenantEntryFacts, d: Extract<EntryDecision, { kind: 'enter' }>): Admission {
  return { kind: 'admitted', tenantId: row.tenant.id, slug: row.tenant.slug, name: row.tenant.name, role: row.member?.role ?? d.role ?? MEMBER_ROLE, userId: row.member?.userId ?? '', provisioned: false };
}

/** `user.sign_in_failed` in the tenant: the reason code only (no email, no code, no secret). */
export async function recordFailure(trx: Transaction, origin: EventOrigin, tenantId: string, accountId: string | null, way: SignInWay | null, reason: string, detail?: string): Promise<string> {
  const event = await recordEvent(trx, origin, {
    action: 'user.sign_in_failed',
    tenantId,
    target: { type: 'sign_in', id: accountId },
    data: { reason, method: way?.method ?? null, connection_id: way?.method === 'sso' ? way.connectionId : null, ...(detail ? { detail } : {}) },
  });
  return event.event_id;
}
