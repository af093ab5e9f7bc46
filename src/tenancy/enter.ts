/**
 * Entering a tenant for a request (PRODUCT.md §3): which tenant the request names, then one
 * statement (app_enter_tenant, src/db/queries/enter-tenant.ts) that finds it, sets
 * app.tenant_id and reads or provisions the caller's membership. With `transaction` the
 * handler's queries follow in the same transaction; with `statement` the request needs nothing
 * more and the statement is its own transaction (one round trip).
 */
import type { Logger } from 'pino';
import type { Transaction } from '../db/tenant-scope';
import type { AuthenticatedContext, Membership, ResolvedTenant, TenantContext, TenantEntry } from '../context/request';
import { enterTenantOnce, withEnteredTenant, type EnterTenantParams, type EnterTenantRow } from '../db/queries/enter-tenant';
import { originOf, recordEvent } from '../domain/events';
import { ApiError } from '../errors';
import { CLAIM_SOURCES, requestedTenant, type TenantSource } from './resolve';

/** Which tenant the request names and whether the caller is provisioned on first use. */
function wantedTenant(ctx: AuthenticatedContext, header: string | null): { args: EnterTenantParams; source: TenantSource } {
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
  // Claims (sources 1–4) are asserted by the identity provider: the caller may be provisioned
  // as a member on first use, where the tenant's membership_policy allows it (decided inside
  // app_enter_tenant). In single-tenant mode every caller belongs to the default tenant.
  const provision = source === 'single_tenant' || CLAIM_SOURCES.has(source);
  return { args: { slug, issuer: caller.issuer, subject: caller.subject, provision, email: caller.email, displayName: caller.name }, source };
}

/** The tenant entry of a row, or the documented refusal (not found, pending, not a member). */
function entryOf(ctx: AuthenticatedContext, row: EnterTenantRow | null, slug: string | null, source: TenantSource): TenantEntry {
  if (!row) {
    if (slug === null) throw new ApiError('unavailable', 'The default tenant does not exist; restart the service to recreate it.');
    throw new ApiError('tenantNotFound', `Tenant '${slug}' not found.`);
  }
  const { caller } = ctx;
  const tenant: ResolvedTenant = {
    id: row.tenant_id,
    name: row.tenant_name,
    slug: row.tenant_slug,
    settings: row.tenant_settings,
    status: row.tenant_status,
    isDefault: row.tenant_is_default,
    provisionFromClaims: row.tenant_provision_from_claims,
    claimsIssuer: row.tenant_claims_issuer,
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
    // A claim named a tenant that does not provision from it: say why, so the fix is clear.
    const why = !CLAIM_SOURCES.has(source)
      ? ''
      : !tenant.provisionFromClaims
        ? ' It admits new members by invitation only.'
        : tenant.claimsIssuer !== null && tenant.claimsIssuer !== caller.issuer
          ? ' It provisions members from the claims of another identity provider only.'
          : '';
    throw new ApiError('accessDenied', `The user does not belong to tenant '${tenant.slug}'.${why}`);
  }
  // Fields on the root logger's line, not a child logger: each field appears once.
  ctx.services.logger.info(
    { request_id: ctx.requestId, tenant_slug: tenant.slug, tenant_id: tenant.id, subject: caller.subject, issuer: caller.issuer, source, provisioned: row.provisioned },
    'Tenant resolved for authenticated request',
  );
  return new EnteredTenant(ctx, tenant, membership, source);
}

/** A TenantEntry whose logger (request and tenant fields) is made only if a handler logs. */
class EnteredTenant implements TenantEntry {
  private child: Logger | null = null;
  readonly requestId: string;
  readonly ip: string | null;
  readonly caller: TenantEntry['caller'];
  readonly config: TenantEntry['config'];
  readonly services: TenantEntry['services'];

  constructor(
    ctx: AuthenticatedContext,
    readonly tenant: ResolvedTenant,
    readonly membership: Membership | null,
    readonly source: TenantSource,
  ) {
    this.requestId = ctx.requestId;
    this.ip = ctx.ip;
    this.caller = ctx.caller;
    this.config = ctx.config;
    this.services = ctx.services;
  }

  get log(): Logger {
    this.child ??= this.services.logger.child({ request_id: this.requestId, tenant_id: this.tenant.id, tenant_slug: this.tenant.slug });
    return this.child;
  }
}

class TenantTransaction extends EnteredTenant implements TenantContext {
  constructor(
    entry: EnteredTenant,
    readonly trx: Transaction,
  ) {
    super(entry, entry.tenant, entry.membership, entry.source);
  }
}

/**
 * Resolves the request's tenant and runs `fn` inside its transaction. Throws the ApiErrors of
 * PRODUCT.md §3 (missing, mismatch, not found, pending, access denied).
 */
export async function enterTenant<T>(ctx: AuthenticatedContext, header: string | null, fn: (tctx: TenantContext) => Promise<T>): Promise<T> {
  const { args, source } = wantedTenant(ctx, header);
  return withEnteredTenant(ctx.services.db, args, async (row, trx) => {
    const entry = entryOf(ctx, row, args.slug, source) as EnteredTenant;
    if (row?.provisioned && entry.membership) {
      // The caller became a member by this request (its token's claim named the tenant): the
      // event is written in the same transaction as the membership.
      const m = entry.membership;
      await recordEvent(trx, originOf(ctx), {
        action: 'member.provisioned',
        tenantId: entry.tenant.id,
        target: { type: 'member', id: m.userId },
        data: { member: { user_id: m.userId, issuer: m.issuer, subject: m.subject, email: m.email, display_name: m.displayName, role: m.role }, source },
      });
    }
    return fn(new TenantTransaction(entry, trx));
  });
}

/** Resolves the request's tenant in one statement (its own transaction); nothing stays open. */
export async function enterTenantOnly(ctx: AuthenticatedContext, header: string | null): Promise<TenantEntry> {
  const { args, source } = wantedTenant(ctx, header);
  if (!args.provision) return entryOf(ctx, await enterTenantOnce(ctx.services.db, args), args.slug, source);
  // A caller the tenant may provision: one statement without provisioning answers every request
  // of an existing member. Only a first use (no membership yet) takes the transaction path, so
  // the new membership and its member.provisioned event commit together.
  const row = await enterTenantOnce(ctx.services.db, { ...args, provision: false });
  if (!row || row.user_id || row.tenant_status === 'pending_approval') return entryOf(ctx, row, args.slug, source);
  return enterTenant(ctx, header, async (tctx) => tctx);
}
