/** updateTenant: the fields present change, with tenant.updated (or tenant.approved) in the same transaction. */
import type { IdentityLink, MembershipPolicy, Tenant } from '../../context/entities';
import { distinctLinks, findTenantForUpdate, identityLinksOf, patchTenant, replaceIdentityLinks } from '../../db/queries/tenants';
import { withService, type Database } from '../../db/tenant-scope';
import { TENANT_LIFECYCLE, transitionTo, type TenantStatusUpdate } from '../../context/tenant-status';
import { ApiError } from '../../errors';
import { changedFields, linksData, recordEvent, tenantData, type EventOrigin } from '../events';
import { tenantNotFound } from './get-tenant';

export interface TenantPatch {
  name?: string;
  slug?: string;
  settings?: Record<string, unknown>;
  status?: TenantStatusUpdate;
  /** Fields present change; `claims_issuer: null` clears the issuer restriction. */
  membershipPolicy?: Partial<MembershipPolicy>;
  /** Replaces the tenant's identity links. */
  identityLinks?: readonly IdentityLink[];
}

/**
 * Changes only the fields present; `settings` replaces the stored object. The default tenant
 * keeps its slug (SERVICE_DEFAULT_TENANT_SLUG finds it at boot) and cannot be put back into
 * `pending_approval` (that would lock every single-tenant request out): both are 400.
 * A taken slug is the unique violation → 409 Conflict.
 */
export async function updateTenant(db: Database, origin: EventOrigin, id: string, patch: TenantPatch): Promise<Tenant> {
  return withService(db, async (trx) => {
    // NO KEY UPDATE: serialises updates of this tenant without waiting for its in-flight requests
    // (they hold it FOR KEY SHARE); a slug change still waits for them (slug is a unique key).
    const current = await findTenantForUpdate(trx, id);
    if (!current) throw tenantNotFound(id);
    if (current.isDefault && patch.slug !== undefined && patch.slug !== current.slug) {
      throw new ApiError('badRequest', `The slug of the default tenant ('${current.slug}') cannot be changed.`);
    }
    if (current.isDefault && patch.status === 'pending_approval') {
      throw new ApiError('badRequest', 'The default tenant cannot be set to pending_approval.');
    }
    // A status changes here only along the lifecycle table's updateTenant transitions; suspension
    // and scheduled deletion end through their own operations, which record why.
    const step = patch.status !== undefined && patch.status !== current.status ? transitionTo(current.status, patch.status, 'updateTenant') : null;
    if (patch.status !== undefined && patch.status !== current.status && !step) {
      const how = TENANT_LIFECYCLE[current.status].transitions.filter((t) => t.operation !== 'updateTenant' && t.to !== 'pending_deletion').map((t) => t.route);
      throw new ApiError('conflict', `Tenant '${current.slug}' is ${current.status}; change its status with ${how.join(' or ')}.`);
    }
    const row = await patchTenant(trx, id, { name: patch.name, slug: patch.slug, settings: patch.settings, status: patch.status, membershipPolicy: patch.membershipPolicy });
    const linksBefore = distinctLinks((await identityLinksOf(trx, [id])).get(id) ?? []);
    let linksAfter = linksBefore;
    if (patch.identityLinks !== undefined) {
      linksAfter = distinctLinks(patch.identityLinks);
      await replaceIdentityLinks(trx, id, linksAfter);
    }
    // A transition with its own event (approving: pending_approval → active) records it; any
    // other changed field is tenant.updated with `before` and `after` of just those fields.
    const approved = step !== null && step.event !== 'tenant.updated';
    const before: Record<string, unknown> = { ...tenantData(current), identity_links: linksData(linksBefore) };
    const diff = changedFields(before, { ...tenantData(row), identity_links: linksData(linksAfter) });
    if (approved) {
      delete diff.before.status;
      delete diff.after.status;
      await recordEvent(trx, origin, {
        action: step.event,
        tenantId: id,
        target: { type: 'tenant', id },
        about: { tenant: row },
        data: { before: { status: current.status }, after: { status: row.status } },
      });
    }
    if (!approved || Object.keys(diff.after).length > 0) {
      await recordEvent(trx, origin, { action: 'tenant.updated', tenantId: id, target: { type: 'tenant', id }, data: { ...diff, slug: row.slug } });
    }
    return { ...row, identityLinks: linksAfter };
  });
}
