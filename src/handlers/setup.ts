/**
 * Tag `setup`: tenant administration (platform admins only). Thin: each handler reads the
 * validated input, calls one domain function and maps its result to the generated types.
 */
import type { DecisionMemory } from '../tenancy/decision-memory';
import type {
  IdentityLink,
  CreateTenantData,
  CreateTenantResponses,
  DeleteTenantData,
  DeleteTenantResponses,
  GetSetupStatusResponses,
  MembershipPolicyInput,
  GetTenantData,
  GetTenantDeletionPreviewData,
  GetTenantDeletionPreviewResponses,
  GetTenantResponses,
  ListTenantsData,
  ListTenantsResponses,
  RotateTenantTokenKeysResponses,
  UpdateTenantData,
  UpdateTenantResponses,
} from '../../generated/types.gen';
import * as admin from '../domain/tenant-admin';
import { getSetupStatus as readSetupStatus } from '../domain/setup-status';
import type { IdentityLink as TenantIdentityLink, MembershipPolicy } from '../context/entities';
import { toTenant } from './mappers';
import { authenticated, type HandlerInput, type Reply } from './types';

/** The request's membership_policy (snake case, fields optional) for the domain. */
function toPolicy(p: MembershipPolicyInput | undefined): Partial<MembershipPolicy> | undefined {
  if (p === undefined) return undefined;
  return {
    ...(p.provision_from_claims !== undefined ? { provisionFromClaims: p.provision_from_claims } : {}),
    ...(p.claims_issuer !== undefined ? { claimsIssuer: p.claims_issuer } : {}),
    ...(p.roles_from_claims !== undefined ? { rolesFromClaims: p.roles_from_claims } : {}),
  };
}

/** Whether this instance answers decisions from memory now, or why not. */
function decisionMemoryStatus(m: DecisionMemory | undefined): 'on' | 'disabled' | 'pooler_without_listen_url' | 'listener_not_listening' | undefined {
  if (!m) return undefined;
  if (m.mode !== 'on') return m.mode;
  return m.facts?.usable ? 'on' : 'listener_not_listening';
}

/** The request's identity_links for the domain. */
function toLinks(links: IdentityLink[] | undefined): TenantIdentityLink[] | undefined {
  return links?.map((l) => ({ issuer: l.issuer, organizationId: l.organization_id }));
}

export const getSetupStatus = authenticated(async (ctx): Promise<Reply<GetSetupStatusResponses>> => {
  const s = await readSetupStatus(ctx.services.db, {
    config: ctx.config,
    embeddedDatabase: ctx.services.embeddedDatabase,
    rateLimitStore: ctx.services.rateLimiter ? ctx.services.rateLimiter.storeState() : null,
    decisionMemory: decisionMemoryStatus(ctx.services.decisionMemory),
  });
  return {
    status: 200,
    body: {
      setup_needed: s.setupNeeded,
      has_default_tenant: s.hasDefaultTenant,
      default_tenant_id: s.defaultTenantId,
      default_tenant_slug: s.defaultTenantSlug,
      multi_tenant_mode: s.multiTenantMode,
      auth_provider: s.authProvider,
      ...(ctx.config.idpPreset ? { idp_preset: ctx.config.idpPreset } : {}),
      recommendations: s.recommendations,
    },
  };
});

export const createTenant = authenticated(async (ctx, input: HandlerInput<CreateTenantData>): Promise<Reply<CreateTenantResponses>> => {
  const key = input.headers['idempotency-key'];
  const created = await admin.createTenant(
    ctx.services.db,
    ctx.origin,
    {
      name: input.body.name,
      slug: input.body.slug,
      settings: input.body.settings,
      includeSampleData: input.body.include_sample_data,
      membershipPolicy: toPolicy(input.body.membership_policy),
      identityLinks: toLinks(input.body.identity_links),
    },
    key !== undefined ? { caller: { issuer: ctx.caller.issuer, subject: ctx.caller.subject }, key } : undefined,
  );
  ctx.log.info({ tenant_id: created.tenantId, tenant_slug: created.slug, existing: created.existing }, created.existing ? 'Tenant create replayed' : 'Tenant created');
  const body = { tenant_id: created.tenantId, name: created.name, slug: created.slug, message: created.message, existing: created.existing };
  return created.existing ? { status: 200, body } : { status: 201, body };
});

export const listTenants = authenticated(async (ctx, input: HandlerInput<ListTenantsData>): Promise<Reply<ListTenantsResponses>> => {
  const page = await admin.listTenants(ctx.services.db, { limit: input.query.limit, cursor: input.query.cursor, q: input.query.q });
  return { status: 200, body: { tenants: page.tenants.map(toTenant), total_count: page.totalCount, next_cursor: page.nextCursor } };
});

export const getTenant = authenticated(async (ctx, input: HandlerInput<GetTenantData>): Promise<Reply<GetTenantResponses>> => ({
  status: 200,
  body: toTenant(await admin.getTenant(ctx.services.db, input.path.tenant_id)),
}));

export const updateTenant = authenticated(async (ctx, input: HandlerInput<UpdateTenantData>): Promise<Reply<UpdateTenantResponses>> => {
  const b = input.body;
  const row = await admin.updateTenant(ctx.services.db, ctx.origin, input.path.tenant_id, {
    name: b.name,
    slug: b.slug,
    settings: b.settings,
    status: b.status,
    membershipPolicy: toPolicy(b.membership_policy),
    identityLinks: toLinks(b.identity_links),
  });
  ctx.log.info({ tenant_id: row.id, tenant_slug: row.slug, fields: Object.keys(b) }, 'Tenant updated');
  return { status: 200, body: toTenant(row) };
});

export const getTenantDeletionPreview = authenticated(
  async (ctx, input: HandlerInput<GetTenantDeletionPreviewData>): Promise<Reply<GetTenantDeletionPreviewResponses>> => {
    const { tenant, rows } = await admin.previewTenantDeletion(ctx.services.db, input.path.tenant_id, { multiTenantMode: ctx.config.multiTenantMode });
    const total = Object.values(rows).reduce((a, b) => a + b, 0);
    return {
      status: 200,
      body: { tenant_id: tenant.id, message: `Deleting tenant '${tenant.name}' (${tenant.slug}) would permanently delete ${total} rows.`, rows },
    };
  },
);

export const deleteTenant = authenticated(async (ctx, input: HandlerInput<DeleteTenantData>): Promise<Reply<DeleteTenantResponses>> => {
  // Query coercion turns `dry_run=true` into a boolean; accept the string too, defensively.
  const dryRun = input.query.dry_run === true || (input.query.dry_run as unknown) === 'true';
  const id = input.path.tenant_id;
  const started = Date.now();
  // Once the tenant is closed (the delete's first step), this instance refuses it at once.
  const afterStep = async (step: admin.DeleteStep) => (step.kind === 'closed' ? ctx.services.decisionMemory?.afterWrite(id) : undefined);
  const result = await admin.deleteTenant(ctx.services.db, ctx.origin, id, { multiTenantMode: ctx.config.multiTenantMode, dryRun, afterStep });
  const { tenant } = result;
  if (result.dryRun) {
    const total = Object.values(result.rows).reduce((a, b) => a + b, 0);
    return {
      status: 200,
      body: {
        dry_run: true,
        tenant_id: tenant.id,
        message: `Deleting tenant '${tenant.name}' (${tenant.slug}) would permanently delete ${total} rows; nothing was deleted.`,
        rows: result.rows,
      },
    };
  }
  ctx.log.warn({ tenant_id: tenant.id, tenant_slug: tenant.slug, rows: result.rows, duration_ms: Date.now() - started }, 'Tenant deleted');
  return {
    status: 200,
    body: {
      message: `Tenant '${tenant.name}' (${tenant.slug}) deleted.`,
      tenant_id: tenant.id,
      warning:
        'All related data (users, boards and their content, generations and media, provider configurations, credit transactions) was permanently deleted.',
    },
  };
});

export const rotateTenantTokenKeys = authenticated(async (ctx): Promise<Reply<RotateTenantTokenKeysResponses>> => {
  const r = await ctx.services.tenantTokenKeys.rotate(ctx.origin);
  ctx.log.info({ kid: r.kid, signs_from: r.signsFrom.toISOString(), previous_kid: r.previousKid }, 'Tenant-token key rotated');
  return {
    status: 200,
    body: { kid: r.kid, signs_from: r.signsFrom.toISOString(), previous_kid: r.previousKid, previous_published_until: r.previousPublishedUntil?.toISOString() ?? null },
  };
});
