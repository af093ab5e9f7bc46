/**
 * Tag `domains`: a tenant's verified domains (its admins, and platform admins through
 * X-Tenant), a platform admin's verified mark, and joining a tenant by one's email's verified
 * domain (any caller). Rules: docs/domains.md.
 */
import type {
  ClaimDomainData,
  ClaimDomainResponses,
  Domain,
  GetDomainData,
  GetDomainResponses,
  JoinTenantData,
  JoinTenantResponses,
  ListDomainsResponses,
  ListJoinableTenantsResponses,
  MarkDomainVerifiedData,
  MarkDomainVerifiedResponses,
  RemoveDomainData,
  RemoveDomainResponses,
  UpdateDomainData,
  UpdateDomainResponses,
  VerifyDomainData,
  VerifyDomainResponses,
} from '../../generated/types.gen';
import { txtLookup } from '../domain/domains/dns';
import * as domains from '../domain/domains/domains';
import { listJoinable } from '../domain/domains/join';
import { unicodeDomain } from '../domain/domains/names';
import { joinByDomain } from '../tenancy/join-by-domain';
import { authenticated, tenantRead, tenantScoped, type HandlerInput, type Reply } from './types';

function toDomain(d: domains.TenantDomain): Domain {
  return {
    domain: unicodeDomain(d.domain),
    domain_ascii: d.domain,
    status: d.status,
    verification: domains.verificationOf(d),
    join: d.join,
    join_role: d.joinRole,
    created_at: d.createdAt.toISOString(),
    verified_at: d.verifiedAt?.toISOString() ?? null,
    checked_at: d.checkedAt?.toISOString() ?? null,
    verified_by: d.verifiedBy,
  };
}

export const listDomains = tenantScoped(async (ctx): Promise<Reply<ListDomainsResponses>> => ({
  status: 200,
  body: { domains: (await domains.listDomains(ctx.trx, ctx.tenant.id)).map(toDomain) },
}));

export const claimDomain = tenantScoped(async (ctx, input: HandlerInput<ClaimDomainData>): Promise<Reply<ClaimDomainResponses>> => {
  const d = await domains.claimDomain(ctx.trx, ctx.origin, ctx.tenant.id, input.body.domain);
  ctx.log.info({ domain: d.domain }, 'Domain claimed');
  return { status: 201, body: toDomain(d) };
});

export const getDomain = tenantScoped(async (ctx, input: HandlerInput<GetDomainData>): Promise<Reply<GetDomainResponses>> => ({
  status: 200,
  body: toDomain(await domains.getDomain(ctx.trx, ctx.tenant.id, input.path.domain)),
}));

export const updateDomain = tenantScoped(async (ctx, input: HandlerInput<UpdateDomainData>): Promise<Reply<UpdateDomainResponses>> => {
  const d = await domains.updateDomain(ctx.trx, ctx.origin, ctx.tenant.id, input.path.domain, { join: input.body.join, joinRole: input.body.join_role });
  ctx.log.info({ domain: d.domain, join: d.join, join_role: d.joinRole }, 'Domain join policy set');
  return { status: 200, body: toDomain(d) };
});

export const removeDomain = tenantScoped(async (ctx, input: HandlerInput<RemoveDomainData>): Promise<Reply<RemoveDomainResponses>> => {
  await domains.removeDomain(ctx.trx, ctx.origin, ctx.tenant.id, input.path.domain);
  ctx.log.info({ domain: input.path.domain }, 'Domain removed');
  return { status: 204, body: undefined };
});

/** No transaction is held while DNS is asked: the entry is read, then the domain code opens its own. */
export const verifyDomain = tenantRead(async (ctx, input: HandlerInput<VerifyDomainData>): Promise<Reply<VerifyDomainResponses>> => {
  const d = await domains.verifyDomain(ctx.services.db, txtLookup(ctx.config.dnsServers), ctx.origin, ctx.tenant.id, input.path.domain);
  ctx.log.info({ domain: d.domain }, 'Domain verified');
  return { status: 200, body: toDomain(d) };
});

export const markDomainVerified = authenticated(async (ctx, input: HandlerInput<MarkDomainVerifiedData>): Promise<Reply<MarkDomainVerifiedResponses>> => {
  const r = await domains.markDomainVerified(ctx.services.db, ctx.origin, input.path.tenant_id, input.body.domain, input.body.verified);
  ctx.log.info({ tenant_id: input.path.tenant_id, domain: r.domain.domain, status: r.domain.status }, 'Domain added by a platform admin');
  return r.created ? { status: 201, body: toDomain(r.domain) } : { status: 200, body: toDomain(r.domain) };
});

export const listJoinableTenants = authenticated(async (ctx): Promise<Reply<ListJoinableTenantsResponses>> => ({
  status: 200,
  body: {
    tenants: (await listJoinable(ctx.services.db, ctx.caller)).map((t) => ({
      tenant_id: t.tenantId,
      slug: t.slug,
      name: t.name,
      domain: unicodeDomain(t.domain),
      join: t.join === 'automatic' ? 'automatic' : 'suggest',
      join_role: t.joinRole,
    })),
  },
}));

export const joinTenant = authenticated(async (ctx, input: HandlerInput<JoinTenantData>): Promise<Reply<JoinTenantResponses>> => {
  const j = await joinByDomain(ctx, input.path.tenant_id);
  ctx.log.info({ tenant_id: input.path.tenant_id, user_id: j.member.userId, domain: j.domain }, 'Member joined by domain');
  return { status: 201, body: { tenant_id: input.path.tenant_id, slug: j.slug, user_id: j.member.userId, role: j.member.role, domain: unicodeDomain(j.domain) } };
});
