/** getTenant: one tenant with its identity links. */
import type { Tenant } from '../../context/entities';
import { findTenantWithLinks } from '../../db/queries/tenants';
import { withService, type Database } from '../../db/tenant-scope';
import { ApiError } from '../../errors';

/** The 404 of a tenant operation naming a tenant that does not exist. */
export const tenantNotFound = (id: string) => new ApiError('tenantNotFound', `Tenant with ID ${id} not found.`);

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
