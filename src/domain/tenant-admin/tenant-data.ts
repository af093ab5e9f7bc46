/** What the tenant operations share: a tenant's 404, its identity links normalized, and its event fields. */
import type { IdentityLink, Tenant } from '../../context/entities';
import { ApiError } from '../../errors';
import { freeForm } from '../events';

export const tenantNotFound = (id: string) => new ApiError('tenantNotFound', `Tenant with ID ${id} not found.`);

/** `links` without repeated pairs, in a stable order. */
export function distinctLinks(links: readonly IdentityLink[]): IdentityLink[] {
  const seen = new Map<string, IdentityLink>();
  for (const l of links) seen.set(JSON.stringify([l.issuer, l.organizationId]), { issuer: l.issuer, organizationId: l.organizationId });
  return [...seen.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, l]) => l);
}

/** Links as events and the idempotency hash spell them. */
export const linksData = (links: readonly IdentityLink[]) => links.map((l) => ({ issuer: l.issuer, organization_id: l.organizationId }));

/** The fields of a tenant an event carries; `settings` only as far as SERVICE_EVENT_SETTINGS_KEYS allows. */
export function tenantData(t: Tenant): Record<string, unknown> {
  return { tenant_id: t.id, name: t.name, slug: t.slug, settings: freeForm(t.settings), status: t.status, is_default: t.isDefault };
}
