/**
 * Entering a tenant for a request: one transaction, whose first statement (app_enter_tenant)
 * finds the tenant, sets app.tenant_id for the transaction, and reads or provisions the caller's
 * membership — resolution plus membership in a single round trip the handler's queries share.
 */
import type { Knex } from 'knex';
import type { AuthenticatedContext, Membership, ResolvedTenant, TenantContext } from '../http/context';
import { ApiError } from '../http/errors';
import { CLAIM_SOURCES, requestedTenant, type TenantSource } from './resolve';

interface EnterRow {
  tenant_id: string;
  tenant_name: string;
  tenant_slug: string;
  tenant_settings: Record<string, unknown>;
  tenant_status: 'active' | 'pending_approval';
  tenant_is_default: boolean;
  tenant_created_at: Date;
  tenant_updated_at: Date;
  user_id: string | null;
  user_email: string | null;
  user_display_name: string | null;
  user_role: 'admin' | 'member' | null;
  user_created_at: Date | null;
  provisioned: boolean;
}

/**
 * Resolves the request's tenant and runs `fn` inside its transaction. Throws the ApiErrors of
 * PRODUCT.md §3 (missing, mismatch, not found, pending, access denied).
 */
export async function enterTenant<T>(
  ctx: AuthenticatedContext,
  header: string | null,
  fn: (tctx: TenantContext) => Promise<T>,
): Promise<T> {
  const { config, caller } = ctx;
  let slug: string | null = null;
  let source: TenantSource = 'single_tenant';
  if (config.multiTenantMode) {
    const wanted = requestedTenant({ claims: caller.claims, header, customClaim: config.jwtTenantClaim });
    if (wanted.kind === 'missing') {
      throw new ApiError(
        'missingTenant',
        'The X-Tenant header is required in multi-tenant mode for this endpoint when the token carries no tenant claim.',
        { multi_tenant_mode: true },
      );
    }
    if (wanted.kind === 'mismatch') {
      throw new ApiError(
        'accessDenied',
        `The token's '${wanted.claim}' claim names tenant '${wanted.claimSlug}' but the X-Tenant header names '${wanted.headerSlug}'.`,
      );
    }
    slug = wanted.slug;
    source = wanted.source;
  }
  // Claims (sources 1–4) are asserted by the identity provider: the caller is provisioned as a
  // member on first use. In single-tenant mode every caller belongs to the default tenant.
  const provision = source === 'single_tenant' || CLAIM_SOURCES.has(source);

  return ctx.services.db.transaction(async (trx: Knex.Transaction) => {
    const result = await trx.raw<{ rows: EnterRow[] }>('select * from app_enter_tenant(?, null, ?, ?, ?, ?, ?)', [
      slug,
      caller.issuer,
      caller.subject,
      provision,
      caller.email,
      caller.name,
    ]);
    const row = result.rows[0];
    if (!row) {
      if (slug === null) throw new ApiError('unavailable', 'The default tenant does not exist; restart the service to recreate it.');
      throw new ApiError('tenantNotFound', `Tenant '${slug}' not found.`);
    }
    const tenant: ResolvedTenant = {
      id: row.tenant_id,
      name: row.tenant_name,
      slug: row.tenant_slug,
      settings: row.tenant_settings,
      status: row.tenant_status,
      isDefault: row.tenant_is_default,
      createdAt: row.tenant_created_at,
      updatedAt: row.tenant_updated_at,
    };
    if (tenant.status === 'pending_approval') {
      throw new ApiError('tenantPending', `Tenant '${tenant.slug}' is awaiting approval by a platform admin.`);
    }
    const membership: Membership | null = row.user_id
      ? {
          userId: row.user_id,
          issuer: caller.issuer,
          subject: caller.subject,
          email: row.user_email,
          displayName: row.user_display_name,
          role: row.user_role!,
          createdAt: row.user_created_at!,
        }
      : null;
    if (!membership && !caller.isPlatformAdmin) {
      throw new ApiError('accessDenied', `The user does not belong to tenant '${tenant.slug}'.`);
    }
    const log = ctx.log.child({ tenant_id: tenant.id, tenant_slug: tenant.slug });
    log.info(
      { tenant_slug: tenant.slug, tenant_id: tenant.id, subject: caller.subject, issuer: caller.issuer, source, provisioned: row.provisioned },
      'Tenant resolved for authenticated request',
    );
    return fn({ ...ctx, log, tenant, membership, source, trx });
  });
}
