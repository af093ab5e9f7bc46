/**
 * Who may enter a tenant and act in it (docs/tenants.md#tenant-resolution,
 * docs/tenants.md#membership, docs/identity-providers.md): the one place that decides tenant
 * entry and membership, as pure functions; who may call an operation at all (x-access) is
 * src/http/access.ts. `refusalOf` answers what the request alone settles (no tenant named, a
 * claim naming several tenants without a choice, a claim and a header that disagree); `decideEntry`
 * answers the rest from the facts one statement read (the tenant, its membership policy and
 * identity links, the caller's membership). SQL fetches the facts and writes what the decision
 * asks for; it decides nothing.
 */
import type { TenantStatus } from '../context/tenant-status';
import { ApiError } from '../errors';
import { statusRefusal } from '../context/tenant-entry';
import { CLAIM_SOURCES, type TenantRequest, type TenantSource } from './resolve';
import { notGivenByDomain } from '../context/permissions';
import { ADMIN_ROLE, MEMBER_ROLE, ROLE_KEY_PATTERN, type RoleKey } from '../context/roles';
import type { IdentityLink, RemovalReason } from '../context/entities';

export type { RemovalReason } from '../context/entities';

/**
 * The facts of the tenant a request found (null: no tenant matched). Not a `Tenant`: only what
 * the decision reads, joined with the caller's membership, in the shape the pure functions test.
 */
export interface TenantFacts {
  readonly slug: string;
  readonly status: TenantStatus;
  readonly provisionFromClaims: boolean;
  readonly claimsIssuer: string | null;
  readonly links: readonly IdentityLink[];
  /** membership_policy.roles_from_claims: the member's role follows the token. */
  readonly rolesFromClaims: boolean;
  /** The caller's role in it; null when not a member. */
  readonly memberRole: RoleKey | null;
  /**
   * The permissions (sorted) of the roles the decision may need that exist in the tenant: the
   * member's, `member`, and those the token's role claim names.
   */
  readonly rolePermissions: Readonly<Record<RoleKey, readonly string[]>>;
  /** Why the caller, not a member, stopped being one here (a mark no claim overrides); null when never removed or since brought back. */
  readonly removal?: RemovalReason | null;
  /** True while the tenant has a SCIM token: it never provisions from claims or linked ids (docs/directory-sync.md). */
  readonly directoryManaged?: boolean;
  /** The caller's membership's directory user is inactive (false); null or absent when not the directory's. */
  readonly directoryActive?: boolean | null;
  /** For a member no directory user is bound to: the unbound directory user their verified email names. */
  readonly directoryMatch?: string | null;
  /** The tenant's longest verified domain covering the caller's verified email (docs/domains.md#joining-by-domain); null: none. */
  readonly verifiedDomain?: VerifiedDomainFact | null;
}

/** A verified domain of the tenant that the caller's verified email is at. */
export interface VerifiedDomainFact {
  readonly domain: string;
  readonly join: 'none' | 'suggest' | 'automatic';
  readonly joinRole: RoleKey;
}


const REMOVED_BY: Record<RemovalReason, string> = {
  removed: 'by an admin',
  left: 'when they left it',
  deprovisioned: 'by its directory',
};

/** What the request asked for, once `refusalOf` let it through. */
export type EntryRequest = Extract<TenantRequest, { kind: 'tenant' } | { kind: 'linked' }> | { kind: 'default' };

export interface EntryCaller {
  readonly issuer: string;
  readonly isPlatformAdmin: boolean;
  /** The token carries what can bind it to a directory user: a verified email, or the tenant's external id claim. */
  readonly canBindDirectoryUser?: boolean;
  /** The role keys the token's role claim names (`tokenRole`); null when no role claim is configured. */
  readonly tokenRole?: readonly RoleKey[] | null;
  /** The deployment's own provider's issuer (SERVICE_JWT_ISSUER, the local or OIDC one); empty when none is pinned. */
  readonly providerIssuers?: readonly string[];
}

/** Role keys a claim may name, at most this many (the rest are ignored). */
const MAX_TOKEN_ROLES = 20;

/**
 * The role keys the role claim's value names: a string or a list of strings, each with a
 * leading `org:` dropped (Clerk's `org:admin` is `admin`); values that cannot be role keys are
 * ignored. Which of them the tenant has is decided by `roleOfToken`.
 */
export function tokenRole(value: unknown): RoleKey[] {
  const values = typeof value === 'string' ? [value] : Array.isArray(value) ? value.slice(0, MAX_TOKEN_ROLES) : [];
  return values.filter((v): v is string => typeof v === 'string').map((v) => (v.startsWith('org:') ? v.slice(4) : v)).filter((v) => ROLE_KEY_PATTERN.test(v));
}

/**
 * The tenant role the token's role keys select (docs/roles.md#roles-from-the-identity-provider):
 * `admin` when listed, else the first key naming a role of the tenant, else `member`.
 */
export function roleOfToken(keys: readonly RoleKey[], available: Readonly<Record<RoleKey, readonly string[]>>): RoleKey {
  const has = (k: RoleKey) => Object.prototype.hasOwnProperty.call(available, k);
  if (keys.includes(ADMIN_ROLE) && has(ADMIN_ROLE)) return ADMIN_ROLE;
  return keys.find(has) ?? MEMBER_ROLE;
}

/** The operation's tenant access level (x-access) and permission (x-permission), with what names it in a refusal. */
export interface TenantAccess {
  readonly level: 'tenantMember' | 'tenantAdmin' | 'tenantPlatformAdmin';
  /** The system permission the caller's role must hold (docs/roles.md#system-permissions); null: any member. */
  readonly permission: string | null;
  readonly method: string;
  readonly path: string;
}

/**
 * The operation's permission against the role the caller acts with (null: admitted). A platform
 * admin keeps the platform's powers over the tenant whatever their membership holds.
 */
export function permissionRefusal(slug: string, access: TenantAccess, role: RoleKey | null, permissions: readonly string[], isPlatformAdmin: boolean): ApiError | null {
  if (access.permission === null || isPlatformAdmin || permissions.includes(access.permission)) return null;
  return new ApiError(
    'accessDenied',
    `${role === null ? 'The caller' : `Role '${role}'`} in tenant '${slug}' does not hold permission '${access.permission}', which ${access.method} ${access.path} needs.`,
  );
}

export type EntryDecision =
  | { readonly kind: 'refuse'; readonly error: ApiError }
  /**
   * Enter; `provision` asks for a membership to be made first (first use), with `role`; on an
   * existing membership a non-null `role` is the token's role replacing the stored one.
   */
  | {
      readonly kind: 'enter';
      readonly source: TenantSource;
      readonly provision: boolean;
      /**
       * A first use on a directory-managed tenant: bind the caller to the directory user their
       * verified email or external id names (refused when there is none).
       */
      readonly bind?: boolean;
      readonly role: RoleKey | null;
      /** The permissions of the role the caller acts with (empty for a platform admin who is not a member). */
      readonly permissions: readonly string[];
      /** A platform admin whose membership the directory deactivated: they act without it. */
      readonly withoutMembership?: boolean;
      /**
       * A member from before the directory was connected: bind their membership to this directory
       * user first, then decide again on the directory's word.
       */
      readonly bindMember?: string;
      /** With `bind`: only the verified email may bind (the tenant trusts the email's verified domain, not the issuer). */
      readonly bindByEmailOnly?: boolean;
      /** With `provision`: the caller joins by this verified domain of the tenant (`member.joined_by_domain`). */
      readonly joinedByDomain?: string;
    };

/** The refusals the request settles before any fact is read; null when it names a tenant. */
export function refusalOf(request: TenantRequest): ApiError | null {
  switch (request.kind) {
    case 'missing':
      return new ApiError(
        'missingTenant',
        'The X-Tenant header is required in multi-tenant mode for this endpoint when the token carries no tenant claim.',
        { multi_tenant_mode: true },
      );
    case 'choose':
      return new ApiError(
        'missingTenant',
        `The token's '${request.claim}' claim names several tenants (${request.listed.map((s) => `'${s}'`).join(', ')}): the X-Tenant header must choose one of them.`,
        { multi_tenant_mode: true },
      );
    case 'mismatch':
      return new ApiError('accessDenied', `The token's '${request.claim}' claim names tenant '${request.claimSlug}' but the X-Tenant header names '${request.headerSlug}'.`);
    case 'unlisted':
      return new ApiError('accessDenied', `The X-Tenant header names tenant '${request.headerSlug}', which the token's '${request.claim}' claim does not list.`);
    default:
      return null;
  }
}

function sourceOf(request: EntryRequest): TenantSource {
  return request.kind === 'default' ? 'single_tenant' : request.kind === 'linked' ? 'organization_id_claim' : request.source;
}

/**
 * Why a tenant of this status cannot be used, whoever asks (null: active): the lifecycle table's
 * refusal (src/context/tenant-status.ts). A suspended tenant and one pending deletion are refused
 * alike, for platform admins too (they manage it under /api/setup); the suspension's reason is
 * never shown (docs/operations.md#tenant-lifecycle). Invitation accept and SCIM ask this too.
 */
export { statusRefusal };

/**
 * True when the tenant trusts the token's issuer to bind directory users
 * (docs/directory-sync.md#directory-users-are-members): its `claims_issuer` or an identity
 * link's issuer; with neither, the deployment's own provider when one is pinned — never merely
 * any issuer the service accepts.
 */
export function trustsIssuerForDirectory(facts: Pick<TenantFacts, 'claimsIssuer' | 'links'>, caller: Pick<EntryCaller, 'issuer' | 'providerIssuers'>): boolean {
  if (facts.claimsIssuer === null && facts.links.length === 0) return (caller.providerIssuers ?? []).includes(caller.issuer);
  return facts.claimsIssuer === caller.issuer || facts.links.some((l) => l.issuer === caller.issuer);
}

/**
 * How the caller may be bound to a directory user: by email or the external id claim when the
 * tenant trusts the token's issuer; by verified email alone when that email is at a verified
 * domain of the tenant (docs/domains.md#directory-binding); null: not at all.
 */
export function directoryTrust(facts: Pick<TenantFacts, 'claimsIssuer' | 'links' | 'verifiedDomain'>, caller: Pick<EntryCaller, 'issuer' | 'providerIssuers'>): 'issuer' | 'domain' | null {
  if (trustsIssuerForDirectory(facts, caller)) return 'issuer';
  return facts.verifiedDomain ? 'domain' : null;
}

/** A role a DNS record may give (docs/domains.md#joining-by-domain): one the tenant has, not `admin`, no `tenant:` permission. */
export function joinRoleAllowed(role: RoleKey, rolePermissions: Readonly<Record<RoleKey, readonly string[]>>): boolean {
  if (role === ADMIN_ROLE || !Object.prototype.hasOwnProperty.call(rolePermissions, role)) return false;
  return notGivenByDomain(rolePermissions[role]!) === undefined;
}

/** The verified domain that makes the caller a member at their first request (automatic join); null: none. */
function automaticJoin(facts: TenantFacts): VerifiedDomainFact | null {
  const d = facts.verifiedDomain ?? null;
  return d !== null && d.join === 'automatic' && joinRoleAllowed(d.joinRole, facts.rolePermissions) ? d : null;
}

/** Decides `POST /api/tenants/{tenant_id}/join` (docs/domains.md#joining-by-domain), on the facts read by tenant id. */
export function decideDomainJoin(facts: TenantFacts | null, tenantId: string): { readonly role: RoleKey; readonly permissions: readonly string[]; readonly domain: string } | ApiError {
  if (!facts) return new ApiError('tenantNotFound', `Tenant '${tenantId}' not found.`);
  const d = facts.verifiedDomain ?? null;
  // A stranger learns nothing more about a tenant they cannot join.
  if (facts.memberRole === null && (d === null || d.join === 'none')) return new ApiError('accessDenied', `Tenant '${facts.slug}' has no verified domain open for joining that your verified email is at.`);
  if (facts.memberRole !== null) return new ApiError('conflict', `The user is already a member of tenant '${facts.slug}'.`);
  const closed = statusRefusal(facts.slug, facts.status);
  if (closed) return closed;
  if (facts.removal) return new ApiError('accessDenied', `The user was removed from tenant '${facts.slug}' ${REMOVED_BY[facts.removal]}; only an accepted invitation or a platform admin can make them a member again.`);
  if (facts.directoryManaged) return new ApiError('accessDenied', `The user does not belong to tenant '${facts.slug}'.${DIRECTORY_MANAGED}`);
  if (!joinRoleAllowed(d!.joinRole, facts.rolePermissions)) return new ApiError('accessDenied', `Tenant '${facts.slug}' gives no role by domain: its join role '${d!.joinRole}' cannot be given that way.`);
  return { role: d!.joinRole, permissions: facts.rolePermissions[d!.joinRole]!, domain: d!.domain };
}

const DIRECTORY_MANAGED = ' Its members come from its directory (SCIM), invitations and platform admins.';

/** Why a caller who is not a member may not be made one (empty when no reason beyond that). */
function provisionRefusal(request: EntryRequest, facts: TenantFacts, caller: EntryCaller): string | null {
  // A directory-managed tenant never provisions from claims or linked ids.
  if (facts.directoryManaged) return DIRECTORY_MANAGED;
  if (request.kind === 'default') return null;
  if (request.kind === 'linked') return facts.provisionFromClaims ? null : ' It admits new members by invitation only.';
  if (!CLAIM_SOURCES.has(request.source)) return '';
  if (!facts.provisionFromClaims) return ' It admits new members by invitation only.';
  if (facts.claimsIssuer !== null && facts.claimsIssuer !== caller.issuer) return ' It provisions members from the claims of another identity provider only.';
  // Names collide across providers and users mint them; ids do not (docs/identity-providers.md#organization-ids).
  if (facts.links.length > 0) return ' It is linked to identity provider organizations: new members join through those links, never through a name claim.';
  return null;
}

/**
 * True when the token's role claim may set the caller's role in this tenant
 * (docs/security.md#roles-from-the-identity-provider): the token names exactly this one tenant,
 * and its issuer is the one the tenant trusts for claims. A linked tenant trusts its links'
 * issuers, and only when the token names it by its linked id (a name claim can be minted by
 * anyone at a provider where users create organizations). An unlinked tenant trusts its
 * `claims_issuer`; with none set it provisions from any accepted issuer, so roles follow any
 * accepted issuer too. A flat role claim beside several organizations says nothing about which.
 */
export function tokenSpeaksForRole(request: EntryRequest, facts: TenantFacts, caller: Pick<EntryCaller, 'issuer'>): boolean {
  if (request.kind === 'linked') {
    return request.organizationIds.length === 1 && facts.links.some((l) => l.issuer === caller.issuer && l.organizationId === request.organizationIds[0]);
  }
  if (request.kind !== 'tenant' || !CLAIM_SOURCES.has(request.source) || request.fromSet) return false;
  if (facts.links.length > 0) return false;
  return facts.claimsIssuer === null || facts.claimsIssuer === caller.issuer;
}

/**
 * Decides a tenant request from its facts: not found, a linked id that does not match, a
 * stranger, a tenant that is not active (pending approval, suspended, pending deletion), a member
 * (or a platform admin) entering, a first use that provisions, or a refusal naming why; then the
 * operation's tenant access level.
 */
export function decideEntry(request: EntryRequest, facts: TenantFacts | null, caller: EntryCaller, access: TenantAccess): EntryDecision {
  const refuse = (error: ApiError): EntryDecision => ({ kind: 'refuse', error });
  if (!facts) {
    if (request.kind === 'default') return refuse(new ApiError('unavailable', 'The default tenant does not exist; restart the service to recreate it.'));
    if (request.kind === 'linked' && request.header === null) {
      return refuse(new ApiError('tenantNotFound', `No tenant is linked to organization '${request.organizationIds[0]}' of issuer '${caller.issuer}'.`));
    }
    return refuse(new ApiError('tenantNotFound', `Tenant '${request.kind === 'linked' ? request.header : request.slug}' not found.`));
  }
  if (request.kind === 'linked') {
    const listed = facts.links.some((l) => l.issuer === caller.issuer && request.organizationIds.includes(l.organizationId));
    if (request.header !== null && request.organizationIds.length === 1 && request.header !== facts.slug) {
      return refuse(
        new ApiError('accessDenied', `The token's '${request.claim}' claim names organization '${request.organizationIds[0]}', linked to tenant '${facts.slug}', but the X-Tenant header names '${request.header}'.`),
      );
    }
    if (!listed) {
      return refuse(new ApiError('accessDenied', `The X-Tenant header names tenant '${facts.slug}', which the token's '${request.claim}' claim does not list.`));
    }
  }
  // On a tenant whose role follows the token, a trusted token's role replaces the stored one
  // (the last-admin rule does not apply).
  const fromToken = facts.rolesFromClaims && caller.tokenRole && tokenSpeaksForRole(request, facts, caller) ? roleOfToken(caller.tokenRole, facts.rolePermissions) : null;
  let role = facts.memberRole;
  let provision = false;
  let setRole: RoleKey | null = null;
  // A removal sticks: no claim, linked id or single-tenant default makes them a member again.
  const removal = role === null ? (facts.removal ?? null) : null;
  // The directory deactivated this member: refused at once, whatever the token says. A platform
  // admin who is such a member keeps the platform's powers over the tenant (operations for its
  // admins or for platform admins) but acts without the membership; as a member (tenantMember
  // operations: the decision, tenant tokens, GET /api/tenant) they are refused like anyone
  // (docs/directory-sync.md#leavers-leave-at-once).
  if (role !== null && facts.directoryActive === false) {
    if (!caller.isPlatformAdmin || access.level === 'tenantMember') {
      return refuse(new ApiError('accessDenied', `The user's membership of tenant '${facts.slug}' was deactivated by its directory.`));
    }
    const closed = statusRefusal(facts.slug, facts.status);
    if (closed) return refuse(closed);
    return { kind: 'enter', source: sourceOf(request), provision: false, role: null, permissions: [], withoutMembership: true };
  }
  // A member from before the directory was connected, named by an unbound directory user (by
  // their verified email), for an issuer the tenant trusts: bound first, then decided again.
  const bindMember =
    role !== null && facts.directoryManaged === true && (facts.directoryActive ?? null) === null && typeof facts.directoryMatch === 'string' && directoryTrust(facts, caller) !== null
      ? facts.directoryMatch
      : undefined;
  // A stranger to a directory-managed tenant may be one of its directory's users, not yet bound.
  const trust = directoryTrust(facts, caller);
  const bind = role === null && !removal && facts.directoryManaged === true && caller.canBindDirectoryUser === true && trust !== null;
  let why = role === null ? (removal ? '' : provisionRefusal(request, facts, caller)) : null;
  // A verified domain joining automatically admits whom the request alone would not.
  const byDomain = role === null && !removal && why !== null && !facts.directoryManaged && request.kind !== 'default' ? automaticJoin(facts) : null;
  if (byDomain) why = null;
  // A stranger learns nothing about the tenant's state (a suspension is between its owner and
  // the operator); anyone else is refused while the tenant is not active, before anything is written.
  if (role === null && why !== null && !caller.isPlatformAdmin && !bind) {
    if (removal) {
      return refuse(
        new ApiError('accessDenied', `The user was removed from tenant '${facts.slug}' ${REMOVED_BY[removal]}; only an accepted invitation or a platform admin can make them a member again.`),
      );
    }
    return refuse(new ApiError('accessDenied', `The user does not belong to tenant '${facts.slug}'.${why}`));
  }
  const closed = statusRefusal(facts.slug, facts.status);
  if (closed) return refuse(closed);
  if (bind && !caller.isPlatformAdmin) {
    // The role is the directory user's (its groups'); the access level is checked on it after binding.
    return { kind: 'enter', source: sourceOf(request), provision: false, bind: true, role: null, permissions: [], ...(trust === 'domain' ? { bindByEmailOnly: true } : {}) };
  }
  if (role === null) {
    if (why === null) {
      provision = true;
      role = setRole = byDomain ? byDomain.joinRole : (fromToken ?? 'member');
    }
  } else if (fromToken !== null && fromToken !== role && (facts.directoryActive ?? null) === null && bindMember === undefined) {
    // A directory's member takes the role its groups give, never the token's
    // (docs/directory-sync.md#groups-give-roles).
    role = setRole = fromToken;
  }
  // Adding a person directly is the operator's act: a tenant's own admins invite instead.
  if (access.level === 'tenantPlatformAdmin' && !caller.isPlatformAdmin) {
    return refuse(new ApiError('forbidden', `Only platform admins may call ${access.method} ${access.path}, not the tenant's own admins.`));
  }
  const permissions = role === null ? [] : (Object.prototype.hasOwnProperty.call(facts.rolePermissions, role) ? facts.rolePermissions[role]! : []);
  // The operation's x-permission, held by the role the caller acts with; no role is named here.
  const denied = permissionRefusal(facts.slug, access, role, permissions, caller.isPlatformAdmin);
  if (denied) return refuse(denied);
  return { kind: 'enter', source: sourceOf(request), provision, role: setRole, permissions, ...(bindMember ? { bindMember } : {}), ...(byDomain ? { joinedByDomain: byDomain.domain } : {}) };
}

/** What a product request needs (the gateway decision's `role` and `permission` parameters). */
export interface ProductRequirement {
  readonly role?: RoleKey;
  /** All required, checked in the order given. */
  readonly permissions?: readonly string[];
}

/**
 * Decides the gateway decision for an entered caller (docs/roles.md#the-decision): a member
 * only; `role` held exactly (`member` admits every member); every permission held by the
 * member's role, else 403 naming the first missing one. A key the catalogue does not know is
 * held by no role, so it is refused (fail closed). Null: admitted.
 */
export function decideProductAccess(
  tenantSlug: string,
  membership: { readonly role: RoleKey; readonly permissions: readonly string[] } | null,
  need: ProductRequirement,
): ApiError | null {
  // A platform admin may read any tenant, but the product needs a member (a user id and a
  // role in the tenant); the operator's standing in tenant-service is not a role in the product.
  if (!membership) return new ApiError('accessDenied', `The caller is a platform admin but not a member of tenant '${tenantSlug}'; the product admits members only.`);
  if (need.role !== undefined && need.role !== MEMBER_ROLE && membership.role !== need.role) {
    return new ApiError('forbidden', `Only members of tenant '${tenantSlug}' with role '${need.role}' pass this decision (role=${need.role}).`);
  }
  const missing = (need.permissions ?? []).find((p) => !membership.permissions.includes(p));
  if (missing !== undefined) {
    return new ApiError('accessDenied', `Role '${membership.role}' in tenant '${tenantSlug}' does not hold permission '${missing}'.`);
  }
  return null;
}
