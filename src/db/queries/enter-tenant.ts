/**
 * The facts a tenant request is decided on, in the request's first statement
 * (`app_tenant_facts`, migrations 015, 016, 018, 019 and 024): the tenant (by id, slug, identity link or the default),
 * its membership policy and identity links, the caller's membership and the permissions of the
 * roles the decision may need, and the caller's removal mark. The statement also sets
 * app.tenant_id for the transaction and takes the tenant's entry lock. It decides nothing: the
 * decision is src/tenancy/decide.ts; the rows it asks for are written by `insertMembership` and
 * `followTokenRole` below.
 */
import type { Knex } from 'knex';
import type { TenantStatus } from '../../context/tenant-status';
import { APP_ROLE } from '../schema';
import type { RemovalReason } from './member-removals';
import { preparedName, queryRows, runStatement, withConnection, withRequestTransaction } from '../request-transaction';
import type { IdentityLink, Member, RoleKey, Tenant, TenantEntryFacts } from '../../context/entities';

export interface TenantFactsQuery {
  /** The tenant's slug; with `tenantId` and `link` null, null means the default tenant. */
  readonly slug: string | null;
  readonly tenantId?: string | null;
  /** Find the tenant by an identity link (used when `slug` and `tenantId` are null). */
  readonly link?: IdentityLink | null;
  /** The caller, whose membership is read. */
  readonly issuer: string;
  readonly subject: string;
  /** Role keys the token's role claim names, whose permissions the decision may need. */
  readonly roles?: readonly string[];
  /** The key of the token's verified email (null: none), matched against unbound directory users. */
  readonly emailKey?: string | null;
  /** The verified email's domain and its parents (A-labels, longest first); null: no verified email. */
  readonly emailDomains?: readonly string[] | null;
  /** The request named the tenant by its email domain: the tenant that verified it is chosen before the slug. */
  readonly byDomain?: boolean;
}

interface IdentityLinkRow {
  issuer: string;
  organization_id: string;
}

/** The statement's row (mapped to the domain's TenantEntryFacts below; tests read it). */
export interface TenantFactsRow {
  /** `current_user` in the same statement: must be the runtime role (checked, fail closed). */
  db_user: string;
  tenant_id: string;
  tenant_name: string;
  tenant_slug: string;
  tenant_settings: Record<string, unknown>;
  tenant_status: TenantStatus;
  tenant_is_default: boolean;
  tenant_created_at: Date;
  tenant_updated_at: Date;
  tenant_provision_from_claims: boolean;
  tenant_claims_issuer: string | null;
  tenant_roles_from_claims: boolean;
  tenant_links: IdentityLinkRow[];
  user_id: string | null;
  user_email: string | null;
  user_display_name: string | null;
  user_role: RoleKey | null;
  user_created_at: Date | null;
  /** Sorted permissions of the member's role, `member` and the token's roles, by role key (those that exist). */
  role_permissions: Record<string, string[]>;
  /** Why the caller stopped being a member of this tenant (src/db/queries/member-removals.ts); null when never removed or since brought back. */
  user_removal: RemovalReason | null;
  /** True while the tenant has a SCIM token: its people come from its directory (docs/directory-sync.md). */
  tenant_directory_managed: boolean;
  /** The claim bound against a directory user's externalId; null when unset. */
  tenant_external_id_claim: string | null;
  /** The caller's directory user's `active`; null when the membership is not the directory's. */
  user_directory_active: boolean | null;
  /**
   * For a member no directory user is bound to, in a directory-managed tenant: the unbound
   * directory user their verified email names (migration 019); null otherwise.
   */
  user_directory_match: string | null;
  /** The tenant's longest verified domain covering the caller's verified email (migration 024); null: none. */
  tenant_domain: string | null;
  /** That domain's join policy. */
  tenant_domain_join: 'none' | 'suggest' | 'automatic' | null;
  /** That domain's join role (its permissions are in `role_permissions`). */
  tenant_domain_join_role: RoleKey | null;
}

/**
 * The statement. The role is set while the function's arguments are evaluated
 * (`set_config('role', …, true)` inside the slug argument), before the function body runs, so no
 * extra round trip is spent and the function's queries run under row-level security even when
 * the connection came from a transaction pooler as the owner. `current_user`, read after the
 * function has run, is checked by `checkedRow`.
 */
const SQL = `select current_user::text as db_user, f.tenant_id, f.tenant_name, f.tenant_slug, f.tenant_settings,
   f.tenant_status, f.tenant_is_default, f.tenant_created_at, f.tenant_updated_at, f.tenant_provision_from_claims,
   f.tenant_claims_issuer, f.tenant_roles_from_claims, f.tenant_links, f.user_id, f.user_email, f.user_display_name, f.user_role, f.user_created_at,
   f.role_permissions, f.user_removal, f.tenant_directory_managed, f.tenant_external_id_claim, f.user_directory_active, f.user_directory_match,
   f.tenant_domain, f.tenant_domain_join, f.tenant_domain_join_role
 from app_tenant_facts(
   case when set_config('role', $1, true) is not null then $2::text end, $3::uuid, $4, $5, $6, $7, $8::text[], $9::text, $10::text[], $11::boolean) f`;
/**
 * Its prepared name (prepared statements live on one connection of one process). The columns
 * are listed, not `f.*`, so a later migration that adds a result column leaves the prepared
 * plan of this statement valid.
 */
const NAME = 'tenant_service_enter_tenant_v5';

function values(q: TenantFactsQuery): unknown[] {
  return [APP_ROLE, q.slug, q.tenantId ?? null, q.link?.issuer ?? null, q.link?.organizationId ?? null, q.issuer, q.subject, q.roles ?? [], q.emailKey ?? null, q.emailDomains ?? null, q.byDomain ?? false];
}

/** The row, after checking the statement ran as the runtime role: a connection that did not
 * (a changed pool setup, a pooler) fails closed instead of serving tenant data without RLS. */
export function checkedRow<R extends { db_user: string }>(rows: readonly R[]): R | null {
  const row = rows[0];
  if (!row) return null;
  if (row.db_user !== APP_ROLE) {
    throw new Error(`app_tenant_facts ran as '${row.db_user}', not the runtime role ${APP_ROLE}: refusing to serve tenant data without row-level security`);
  }
  return row;
}

const factsOf = (rows: TenantFactsRow[]): TenantEntryFacts | null => {
  const row = checkedRow(rows);
  return row && factsOfRow(row);
};

/** The facts the statement's row states, in the domain's words (kept as they are in memory, src/tenancy/facts-memory.ts). */
function factsOfRow(row: TenantFactsRow): TenantEntryFacts {
  const tenant: Tenant = {
    id: row.tenant_id,
    name: row.tenant_name,
    slug: row.tenant_slug,
    settings: row.tenant_settings,
    status: row.tenant_status,
    isDefault: row.tenant_is_default,
    membershipPolicy: { provisionFromClaims: row.tenant_provision_from_claims, claimsIssuer: row.tenant_claims_issuer, rolesFromClaims: row.tenant_roles_from_claims },
    identityLinks: row.tenant_links.map((l) => ({ issuer: l.issuer, organizationId: l.organization_id })),
    createdAt: row.tenant_created_at,
    updatedAt: row.tenant_updated_at,
  };
  const member =
    row.user_id === null ? null : { userId: row.user_id, email: row.user_email, displayName: row.user_display_name, role: row.user_role!, createdAt: row.user_created_at! };
  return {
    tenant,
    member,
    rolePermissions: row.role_permissions,
    removal: row.user_removal,
    directoryManaged: row.tenant_directory_managed,
    externalIdClaim: row.tenant_external_id_claim,
    directoryActive: row.user_directory_active,
    directoryMatch: row.user_directory_match,
    domainAtEmail: row.tenant_domain === null ? null : { domain: row.tenant_domain, join: row.tenant_domain_join!, joinRole: row.tenant_domain_join_role! },
  };
}

/**
 * The single-round-trip path (GET /api/tenant): the statement alone on a pooled connection,
 * without BEGIN/COMMIT. It is its own transaction; its role, app.tenant_id and locks end with it.
 * `withConnection` closes a connection left in an unknown state instead of pooling it.
 */
export async function readTenantFacts(db: Knex, q: TenantFactsQuery): Promise<TenantEntryFacts | null> {
  return withConnection(db, async (connection) => factsOf(await runStatement<TenantFactsRow>(connection, SQL, values(q), preparedName(db, NAME))));
}

/**
 * Opens the request's transaction (src/db/request-transaction.ts) with the statement as its
 * first, then runs `fn` with the row (null when no tenant matched) in the same transaction.
 */
export async function withTenantFacts<T>(db: Knex, q: TenantFactsQuery, fn: (facts: TenantEntryFacts | null, trx: Knex.Transaction) => Promise<T>): Promise<T> {
  const name = preparedName(db, NAME);
  return withRequestTransaction(db, async (connection) => factsOf(await runStatement<TenantFactsRow>(connection, SQL, values(q), name)), fn);
}

/** The facts again, inside the request's transaction (after a directory user was bound to the caller). */
export async function rereadTenantFacts(trx: Knex.Transaction, q: TenantFactsQuery): Promise<TenantEntryFacts | null> {
  return factsOf(await queryRows<TenantFactsRow>(trx, SQL, values(q), NAME));
}

/**
 * Sets the member's role to `to` if it still is `from` (the token's role on a tenant with
 * roles_from_claims) and returns the role now held. Null when a concurrent request changed it
 * first: that one records the event.
 */
export async function followTokenRole(trx: Knex.Transaction, tenantId: string, userId: string, from: RoleKey, to: RoleKey): Promise<RoleKey | null> {
  const rows = await queryRows<MembershipRow>(
    trx,
    `update users set role = $4 where tenant_id = $1 and id = $2 and role = $3 returning id, email, display_name, role, created_at`,
    [tenantId, userId, from, to],
    'tenant_service_follow_token_role_v1',
  );
  return rows[0]?.role ?? null;
}

interface MembershipRow {
  id: string;
  email: string | null;
  display_name: string | null;
  role: RoleKey;
  created_at: Date;
}

/**
 * Makes the caller a member (inside the tenant's transaction). `made` is false when a
 * concurrent first request made the row first: only the request that inserted it records the
 * event. The row is locked FOR KEY SHARE either way, like the facts statement's.
 */
export async function insertMembership(
  trx: Knex.Transaction,
  m: { tenantId: string; issuer: string; subject: string; email: string | null; displayName: string | null; role: RoleKey },
): Promise<{ member: Member; made: boolean } | null> {
  const memberOf = (r: MembershipRow): Member => ({ userId: r.id, issuer: m.issuer, subject: m.subject, email: r.email, displayName: r.display_name, role: r.role, createdAt: r.created_at });
  const inserted = await queryRows<MembershipRow>(
    trx,
    `insert into users (tenant_id, issuer, subject, email, display_name, role) values ($1, $2, $3, $4, $5, $6)
     on conflict on constraint users_tenant_identity_unique do nothing
     returning id, email, display_name, role, created_at`,
    [m.tenantId, m.issuer, m.subject, m.email, m.displayName, m.role],
    'tenant_service_insert_membership_v1',
  );
  if (inserted[0]) return { member: memberOf(inserted[0]), made: true };
  const existing = await queryRows<MembershipRow>(
    trx,
    `select id, email, display_name, role, created_at from users
      where tenant_id = $1 and issuer = $2 and subject = $3 for key share`,
    [m.tenantId, m.issuer, m.subject],
  );
  return existing[0] ? { member: memberOf(existing[0]), made: false } : null;
}
