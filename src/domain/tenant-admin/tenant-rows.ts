/** What the tenant administration operations share: a tenant row with its identity links, its 404, and its event fields. */
import type { TenantRow } from '../../db/models';
import { identityLinksOf, type IdentityLink } from '../../db/queries/identity-links';
import type { Transaction } from '../../db/tenant-scope';
import { ApiError } from '../../errors';
import { freeForm } from '../events';

export type { IdentityLink } from '../../db/queries/identity-links';

/** A tenants row with its identity links, as platform admins read it. */
export type LinkedTenantRow = TenantRow & { identityLinks: IdentityLink[] };

export const tenantNotFound = (id: string) => new ApiError('tenantNotFound', `Tenant with ID ${id} not found.`);

/** `links` without repeated pairs, in a stable order. */
export function distinctLinks(links: readonly IdentityLink[]): IdentityLink[] {
  const seen = new Map<string, IdentityLink>();
  for (const l of links) seen.set(JSON.stringify([l.issuer, l.organizationId]), { issuer: l.issuer, organizationId: l.organizationId });
  return [...seen.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, l]) => l);
}

/** Links as events and the idempotency hash spell them. */
export const linksData = (links: readonly IdentityLink[]) => links.map((l) => ({ issuer: l.issuer, organization_id: l.organizationId }));

/** `rows` with their identity links, read in one query. */
export async function withLinks(trx: Transaction, rows: TenantRow[]): Promise<LinkedTenantRow[]> {
  const links = await identityLinksOf(
    trx,
    rows.map((r) => r.id),
  );
  return rows.map((r) => Object.assign(r, { identityLinks: links.get(r.id) ?? [] }));
}

/** The fields of a tenant an event carries; `settings` only as far as SERVICE_EVENT_SETTINGS_KEYS allows. */
export function tenantData(t: TenantRow): Record<string, unknown> {
  return { tenant_id: t.id, name: t.name, slug: t.slug, settings: freeForm(t.settings), status: t.status, is_default: t.is_default };
}
