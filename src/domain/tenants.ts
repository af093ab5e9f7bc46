/**
 * Creating tenants: the tenant row, its first admin (registration) and its sample data, all in
 * one transaction, the tenant-owned rows written under row-level security for the new tenant.
 */
import { TenantRow, UserRow } from '../db/models';
import { setTenantScope, type Transaction } from '../db/tenant-scope';
import { insertSampleData } from './sample-data';

export interface NewTenant {
  name: string;
  slug: string;
  settings?: Record<string, unknown>;
  status?: 'active' | 'pending_approval';
  /** Who registered it (self-service registration); counted by SERVICE_MAX_TENANTS_PER_USER. */
  createdBy?: { issuer: string; subject: string };
  /** Registration details kept with the tenant (use case, size, metadata…). */
  registration?: Record<string, unknown>;
  /** Who may join by claims (docs/tenants.md#membership); default: provision from any issuer's claims. */
  membershipPolicy?: MembershipPolicy;
  /** The tenant's first member, made its `admin`. */
  admin?: { issuer: string; subject: string; email: string | null; displayName: string | null };
  includeSampleData: boolean;
}

/** A tenant's membership policy (docs/tenants.md#membership). */
export interface MembershipPolicy {
  provisionFromClaims: boolean;
  claimsIssuer: string | null;
  /** The member's role follows the token's role claim on every request (docs/identity-providers.md#roles-from-the-provider). */
  rolesFromClaims?: boolean;
}

export interface CreatedTenant {
  tenant: TenantRow;
  adminUserId: string | null;
}

/**
 * Inserts a tenant (and its admin and sample data) inside `trx`. A taken slug surfaces as the
 * unique violation on `tenants_slug_unique`, which the error catalog maps to 409 Conflict.
 */
export async function createTenantWithSampleData(trx: Transaction, input: NewTenant): Promise<CreatedTenant> {
  const tenant = await TenantRow.query(trx)
    .insert({
      name: input.name,
      slug: input.slug,
      settings: input.settings ?? {},
      status: input.status ?? 'active',
      created_by_issuer: input.createdBy?.issuer ?? null,
      created_by_subject: input.createdBy?.subject ?? null,
      registration: input.registration ?? null,
      provision_from_claims: input.membershipPolicy?.provisionFromClaims ?? true,
      claims_issuer: input.membershipPolicy?.claimsIssuer ?? null,
      roles_from_claims: input.membershipPolicy?.rolesFromClaims ?? false,
    })
    .returning('*');
  await setTenantScope(trx, tenant.id);

  let adminUserId: string | null = null;
  if (input.admin) {
    const user = await UserRow.query(trx)
      .insert({
        tenant_id: tenant.id,
        issuer: input.admin.issuer,
        subject: input.admin.subject,
        email: input.admin.email,
        display_name: input.admin.displayName,
        role: 'admin',
      })
      .returning('id');
    adminUserId = user.id;
  }
  if (input.includeSampleData) await insertSampleData(trx, tenant.id, adminUserId);
  return { tenant, adminUserId };
}
