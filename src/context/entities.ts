/**
 * The vocabulary every layer speaks (docs/architecture.md#one-vocabulary): a tenant, its
 * identity links, a member, a role. Rows are mapped to these once, by the query modules of
 * src/db/queries; the domain, tenancy and handlers never see a row. Types only, so every
 * layer (and the console) may read it.
 */
import type { RoleKey } from './roles';
import type { TenantStatus } from './tenant-status';

export type { RoleKey } from './roles';
export type { TenantStatus } from './tenant-status';

/** An (issuer, organization id) pair naming a tenant (docs/identity-providers.md#organization-ids). */
export interface IdentityLink {
  readonly issuer: string;
  readonly organizationId: string;
}

/** Who may join a tenant by claims (docs/tenants.md#membership). */
export interface MembershipPolicy {
  readonly provisionFromClaims: boolean;
  /** Only this issuer's claims provision; null: any issuer's. */
  readonly claimsIssuer: string | null;
  /** The member's role follows the token's role claim on every request (docs/identity-providers.md#roles-from-the-provider). */
  readonly rolesFromClaims: boolean;
}

/** Why a tenant is suspended or when its scheduled deletion runs (docs/operations.md#tenant-lifecycle). */
export interface TenantLifecycle {
  readonly suspendedAt: Date | null;
  readonly suspensionReason: string | null;
  readonly deleteAfter: Date | null;
  /** What a cancelled deletion restores. */
  readonly statusBeforeDeletion: Exclude<TenantStatus, 'pending_deletion'> | null;
}

/** A tenant. */
export interface Tenant {
  readonly id: string;
  readonly name: string;
  readonly slug: string;
  readonly settings: Record<string, unknown>;
  readonly status: TenantStatus;
  readonly isDefault: boolean;
  readonly membershipPolicy: MembershipPolicy;
  /** Its links, sorted; absent where the read did not ask for them (a row locked by another operation). */
  readonly identityLinks?: readonly IdentityLink[];
  /** Platform admins' reads only: a tenant entered by a request (`GET /api/tenant`) never carries it. */
  readonly lifecycle?: TenantLifecycle;
  readonly createdAt: Date;
  readonly updatedAt: Date;
}

/** A person in a tenant (a `users` row). */
export interface Member {
  readonly userId: string;
  readonly issuer: string;
  readonly subject: string;
  readonly email: string | null;
  readonly displayName: string | null;
  readonly role: RoleKey;
  readonly createdAt: Date;
}

/** A member with their role's permissions (sorted, docs/roles.md): the caller's membership, and what member operations answer. */
export interface Membership extends Member {
  readonly permissions: readonly string[];
}

/** A permission of the catalogue (docs/roles.md). */
export interface Permission {
  readonly key: string;
  readonly description: string;
  readonly createdAt: Date;
  /** One of the service's own `tenant:` permissions (docs/roles.md#system-permissions). */
  readonly system: boolean;
}

/** A role: a platform role (built in or added) or a tenant's own. */
export interface Role {
  readonly key: RoleKey;
  readonly name: string;
  readonly description: string;
  /** Sorted. */
  readonly permissions: readonly string[];
  readonly scope: 'platform' | 'tenant';
  readonly builtIn: boolean;
  readonly createdAt: Date;
  readonly updatedAt: Date;
}

/** Removed by an admin, left, or deprovisioned by a directory: why a person stopped being a member. */
export type RemovalReason = 'removed' | 'left' | 'deprovisioned';

/**
 * What entering a tenant is decided on (docs/tenants.md#membership), read for a caller in one
 * statement by src/db/queries/enter-tenant.ts and held as it is in memory
 * (docs/architecture.md#decisions-from-memory).
 */
export interface TenantEntryFacts {
  /** The tenant, with its identity links. */
  readonly tenant: Tenant;
  /** The caller's membership (null: not a member); issuer and subject are the caller's. */
  readonly member: Omit<Member, 'issuer' | 'subject'> | null;
  /** Sorted permissions of the member's role, `member` and the token's roles, by role key (those that exist). */
  readonly rolePermissions: Readonly<Record<RoleKey, readonly string[]>>;
  /** Why the caller stopped being a member here; null when never removed or since brought back. */
  readonly removal: RemovalReason | null;
  /** True while the tenant has a SCIM token: its people come from its directory (docs/directory-sync.md). */
  readonly directoryManaged: boolean;
  /** The claim bound against a directory user's externalId; null when unset. */
  readonly externalIdClaim: string | null;
  /** The caller's directory user's `active`; null when the membership is not the directory's. */
  readonly directoryActive: boolean | null;
  /** For a member no directory user is bound to, in a directory-managed tenant: the unbound directory user their verified email names. */
  readonly directoryMatch: string | null;
  /** The tenant's longest verified domain covering the caller's email, with its join policy and role (docs/domains.md#joining-by-domain); null: none. */
  readonly domainAtEmail: { readonly domain: string; readonly join: 'none' | 'suggest' | 'automatic'; readonly joinRole: RoleKey } | null;
}
