/** getTenant: one tenant with its identity links. */
import { TenantRow } from '../../db/models';
import { withService, type Database } from '../../db/tenant-scope';
import { tenantNotFound, withLinks, type LinkedTenantRow } from './tenant-rows';

/** The tenant with `id`, or 404 `Tenant not found` naming it. */
export async function getTenant(db: Database, id: string): Promise<LinkedTenantRow> {
  return withService(
    db,
    async (trx) => {
      const row = await TenantRow.query(trx).findById(id);
      if (!row) throw tenantNotFound(id);
      return (await withLinks(trx, [row]))[0]!;
    },
    { readOnly: true },
  );
}
