/**
 * Registration's statements that are not row CRUD: the per-caller lock and the caller's
 * memberships across tenants.
 */
import type { Knex } from 'knex';
import type { TenantStatus } from '../../context/tenant-status';
import type { RoleKey } from '../../context/roles';

/**
 * Serialises one caller's registrations (and only theirs) until commit: a transaction-scoped
 * advisory lock on a hash of (issuer, subject).
 */
export async function lockRegistrant(trx: Knex.Transaction, issuer: string, subject: string): Promise<void> {
  await trx.raw('select pg_advisory_xact_lock(hashtextextended(?, 0))', [`${issuer}\n${subject}`]);
}

/** A tenant the caller is a member of, with their role there (`GET /api/tenants/mine`). */
export interface CallerMembership {
  readonly tenantId: string;
  readonly name: string;
  readonly slug: string;
  readonly status: TenantStatus;
  readonly role: RoleKey;
  /** The role's permissions, sorted. */
  readonly permissions: readonly string[];
  readonly joinedAt: Date;
}

interface MembershipRow {
  tenant_id: string;
  name: string;
  slug: string;
  status: TenantStatus;
  role: RoleKey;
  /** The role's permissions, sorted. */
  permissions: string[];
  created_at: Date;
}

/** Every tenant the (issuer, subject) is a member of, oldest membership first. `trx` must see all tenants. */
export async function membershipsOf(trx: Knex.Transaction, issuer: string, subject: string): Promise<CallerMembership[]> {
  const rows = (await trx('users as u')
    .join('tenants as t', 't.id', 'u.tenant_id')
    .where({ 'u.issuer': issuer, 'u.subject': subject })
    .select('t.id as tenant_id', 't.name', 't.slug', 't.status', 'u.role', 'u.created_at')
    // The role's permissions: a platform role's, else the tenant's own role's (sorted as JavaScript sorts).
    .select(
      trx.raw(`coalesce(
        (select array_agg(p.permission_key::text order by p.permission_key collate "C") from platform_role_permissions p where p.role_key = u.role),
        (select array_agg(p.permission_key::text order by p.permission_key collate "C") from tenant_role_permissions p where p.tenant_id = u.tenant_id and p.role_key = u.role),
        '{}') as permissions`),
    )
    .orderBy([{ column: 'u.created_at' }, { column: 't.id' }])) as MembershipRow[];
  return rows.map((r) => ({ tenantId: r.tenant_id, name: r.name, slug: r.slug, status: r.status, role: r.role, permissions: r.permissions, joinedAt: r.created_at }));
}
