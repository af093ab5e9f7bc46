/** getTenant: one tenant with its identity links. */
import type { Tenant } from '../../context/entities';
import { findTenantWithLinks } from '../../db/queries/tenants';
import { withService, type Database } from '../../db/tenant-scope';
import { tenantNotFound } from './tenant-data';

/** The tenant with `id`, or 404 `Tenant not found` naming it. */
export async function getTenant(db: Database, id: string): Promise<Tenant> {
  return withService(
    db,
    async (trx) => {
      const tenant = await findTenantWithLinks(trx, id);
      if (!tenant) throw tenantNotFound(id);
      return tenant;
    },
    { readOnly: true },
  );
}
