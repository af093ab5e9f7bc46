/**
 * Identity links (migration 008): (issuer, organization id) pairs naming a tenant. A platform
 * table (no row-level security), written only by platform admins' tenant create and update.
 */
import type { Knex } from 'knex';

export interface IdentityLink {
  readonly issuer: string;
  readonly organizationId: string;
}

/** The links of each of `tenantIds` (a tenant without links is absent from the map). */
export async function identityLinksOf(trx: Knex.Transaction, tenantIds: readonly string[]): Promise<Map<string, IdentityLink[]>> {
  const out = new Map<string, IdentityLink[]>();
  if (tenantIds.length === 0) return out;
  const rows = (await trx('identity_links')
    .select('tenant_id', 'issuer', 'organization_id')
    .whereIn('tenant_id', tenantIds as string[])
    .orderBy(['issuer', 'organization_id'])) as Array<{ tenant_id: string; issuer: string; organization_id: string }>;
  for (const r of rows) {
    const list = out.get(r.tenant_id) ?? [];
    list.push({ issuer: r.issuer, organizationId: r.organization_id });
    out.set(r.tenant_id, list);
  }
  return out;
}

/**
 * Makes `links` the tenant's links: the ones no longer wanted are deleted, the new ones
 * inserted. A pair another tenant holds is the unique violation `identity_links_pair_unique`
 * (409). The caller holds the tenant row locked, so two updates of one tenant do not interleave.
 */
export async function replaceIdentityLinks(trx: Knex.Transaction, tenantId: string, links: readonly IdentityLink[]): Promise<void> {
  const key = (issuer: string, organizationId: string) => JSON.stringify([issuer, organizationId]);
  const wanted = new Map(links.map((l) => [key(l.issuer, l.organizationId), l]));
  const current = (await trx('identity_links').select('issuer', 'organization_id').where({ tenant_id: tenantId })) as Array<{ issuer: string; organization_id: string }>;
  const stale = current.filter((c) => !wanted.delete(key(c.issuer, c.organization_id)));
  for (const c of stale) await trx('identity_links').where({ tenant_id: tenantId, issuer: c.issuer, organization_id: c.organization_id }).delete();
  if (wanted.size === 0) return;
  await trx('identity_links').insert([...wanted.values()].map((l) => ({ tenant_id: tenantId, issuer: l.issuer, organization_id: l.organizationId })));
}
