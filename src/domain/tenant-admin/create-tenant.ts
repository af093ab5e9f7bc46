/**
 * Creating a tenant: `createTenant` (a platform admin's, under an optional Idempotency-Key) and
 * `createTenantWithSampleData`, which registration shares: the tenant row, its first admin and
 * its sample data in one transaction, the tenant-owned rows written under row-level security for
 * the new tenant.
 */
import type { TenantStatusUpdate } from '../../context/tenant-status';
import type { IdentityLink, MembershipPolicy, Tenant } from '../../context/entities';
import { distinctLinks, insertSampleData, insertTenant, insertTenantAdmin, replaceIdentityLinks } from '../../db/queries/tenants';
import { withService, type Database, type Transaction } from '../../db/tenant-scope';
import { recordEvent, type EventOrigin } from '../events';
import { requestHash, withIdempotencyKey, type IdempotencyInput } from '../idempotency';

export interface NewTenant {
  name: string;
  slug: string;
  settings?: Record<string, unknown>;
  status?: TenantStatusUpdate;
  /** Who registered it (self-service registration); counted by SERVICE_MAX_TENANTS_PER_USER. */
  createdBy?: { issuer: string; subject: string };
  /** Registration details kept with the tenant (use case, size, metadata…). */
  registration?: Record<string, unknown>;
  /** Who may join by claims (docs/tenants.md#membership); default: provision from any issuer's claims. */
  membershipPolicy?: Partial<MembershipPolicy>;
  /** The tenant's first member, made its `admin`. */
  admin?: { issuer: string; subject: string; email: string | null; displayName: string | null };
  includeSampleData: boolean;
}

export interface CreatedTenant {
  tenant: Tenant;
  /** The registration details as stored (null when none). */
  registration: Record<string, unknown> | null;
  adminUserId: string | null;
}

/**
 * Inserts a tenant (and its admin and sample data) inside `trx`. A taken slug surfaces as the
 * unique violation on `tenants_slug_unique`, which the error catalog maps to 409 Conflict.
 */
export async function createTenantWithSampleData(trx: Transaction, input: NewTenant): Promise<CreatedTenant> {
  const { tenant, registration } = await insertTenant(trx, {
    name: input.name,
    slug: input.slug,
    settings: input.settings ?? {},
    status: input.status ?? 'active',
    createdBy: input.createdBy ?? null,
    registration: input.registration ?? null,
    membershipPolicy: {
      provisionFromClaims: input.membershipPolicy?.provisionFromClaims ?? true,
      claimsIssuer: input.membershipPolicy?.claimsIssuer ?? null,
      rolesFromClaims: input.membershipPolicy?.rolesFromClaims ?? false,
    },
  });
  const adminUserId = input.admin ? (await insertTenantAdmin(trx, tenant.id, input.admin)).userId : null;
  if (input.includeSampleData) await insertSampleData(trx, tenant.id, adminUserId);
  return { tenant, registration, adminUserId };
}

export interface CreateTenantInput {
  name: string;
  slug: string;
  settings?: Record<string, unknown>;
  includeSampleData?: boolean;
  /** Default for tenants a platform admin creates: provision from claims of any issuer. */
  membershipPolicy?: Partial<MembershipPolicy>;
  /** Organizations of identity providers naming the tenant (docs/identity-providers.md#organization-ids). */
  identityLinks?: readonly IdentityLink[];
}

/** What the create answers; `existing` is true for an idempotent replay. */
export interface TenantCreation {
  tenantId: string;
  name: string;
  slug: string;
  message: string;
  existing: boolean;
}

/** The stored first response of an idempotent create. */
interface StoredCreation extends Record<string, unknown> {
  tenant_id: string;
  name: string;
  slug: string;
  message: string;
}

/** sha256 of the request with its defaults applied, so `{}` settings and no settings match. */
export function createRequestHash(input: CreateTenantInput): string {
  return requestHash({
    name: input.name,
    slug: input.slug,
    settings: input.settings ?? {},
    include_sample_data: input.includeSampleData ?? false,
    membership_policy: {
      provision_from_claims: input.membershipPolicy?.provisionFromClaims ?? true,
      claims_issuer: input.membershipPolicy?.claimsIssuer ?? null,
      // Absent unless on, so the hash of a request without it is what it always was.
      roles_from_claims: input.membershipPolicy?.rolesFromClaims ? true : undefined,
    },
    // Absent unless given, so the hash of a request without links is what it always was. Spelled
    // here, not by the events' form of links: a stored hash must not change with how events look.
    identity_links: input.identityLinks?.length ? distinctLinks(input.identityLinks).map((l) => ({ issuer: l.issuer, organization_id: l.organizationId })) : undefined,
  });
}

/**
 * Creates a tenant (and its sample data) in one transaction. A taken slug is the unique
 * violation on `tenants_slug_unique` (409 Conflict). With an idempotency key, a replay answers
 * the first response and one key never makes two tenants (`withIdempotencyKey`).
 */
export async function createTenant(db: Database, origin: EventOrigin, input: CreateTenantInput, idempotency?: IdempotencyInput): Promise<TenantCreation> {
  return withService(db, (trx) =>
    withIdempotencyKey<TenantCreation, StoredCreation>(
      trx,
      idempotency,
      idempotency ? createRequestHash(input) : '',
      async () => {
        const includeSampleData = input.includeSampleData ?? false;
        const { tenant } = await createTenantWithSampleData(trx, {
          name: input.name,
          slug: input.slug,
          settings: input.settings ?? {},
          includeSampleData,
          membershipPolicy: {
            provisionFromClaims: input.membershipPolicy?.provisionFromClaims ?? true,
            claimsIssuer: input.membershipPolicy?.claimsIssuer ?? null,
            rolesFromClaims: input.membershipPolicy?.rolesFromClaims ?? false,
          },
        });
        const links = distinctLinks(input.identityLinks ?? []);
        if (links.length > 0) await replaceIdentityLinks(trx, tenant.id, links);
        const message = includeSampleData
          ? `Tenant '${tenant.name}' (${tenant.slug}) created with sample data.`
          : `Tenant '${tenant.name}' (${tenant.slug}) created.`;
        await recordEvent(trx, origin, {
          action: 'tenant.created',
          tenantId: tenant.id,
          target: { type: 'tenant', id: tenant.id },
          about: { tenant, identityLinks: links },
          data: { include_sample_data: includeSampleData },
        });
        return {
          result: { tenantId: tenant.id, name: tenant.name, slug: tenant.slug, message, existing: false },
          stored: { tenant_id: tenant.id, name: tenant.name, slug: tenant.slug, message },
          tenantId: tenant.id,
        };
      },
      (r) => ({ tenantId: r.tenant_id, name: r.name, slug: r.slug, message: r.message, existing: true }),
    ),
  );
}
