/** deleteTenant (and its dry run): everything a tenant owns, in short batches, then the tenant row. */
import type { Tenant } from '../../context/entities';
import { countTenantRowsIn, deleteTenantRowsBatch, lockTenantExclusively, type TableCounts } from '../../db/queries/tenant-delete';
import { TENANT_TABLES, type TenantTable } from '../../db/schema';
import { deleteTenantRow, findTenant } from '../../db/queries/tenants';
import { withTenant, type Database } from '../../db/tenant-scope';
import { ApiError } from '../../errors';
import { recordEvent, tenantData, type EventOrigin } from '../events';
import { getTenant, tenantNotFound } from './get-tenant';

/**
 * Tenant tables children before parents (TENANT_TABLES lists parents first). Deleting in this
 * order means each batch's foreign-key actions find nothing left to cascade or set null, so a
 * batch costs only its own rows.
 */
export const DELETE_ORDER: readonly TenantTable[] = [...TENANT_TABLES].reverse();

/** Rows per tenant table. */
export type { TableCounts } from '../../db/queries/tenant-delete';

/** Rows of each tenant table that belong to `tenantId`, counted under its row-level security. */
export async function countTenantRows(db: Database, tenantId: string): Promise<TableCounts> {
  return withTenant(db, tenantId, (trx) => countTenantRowsIn(trx, tenantId));
}

export interface DeleteOptions {
  /** Whether the service runs in multi-tenant mode (the default tenant is deletable only then). */
  multiTenantMode: boolean;
  dryRun?: boolean;
  /** Rows per batch (default 5000). */
  batchSize?: number;
}

export type TenantDeletion =
  | { dryRun: true; tenant: Tenant; rows: TableCounts }
  | { dryRun: false; tenant: Tenant; rows: TableCounts };

export const DELETE_BATCH_SIZE = 5000;

/** The tenant, if a delete may remove it (404 if none; 400 for the default one in single-tenant mode). */
async function deletableTenant(db: Database, id: string, opts: { multiTenantMode: boolean }): Promise<Tenant> {
  const tenant = await getTenant(db, id);
  if (tenant.isDefault && !opts.multiTenantMode) {
    throw new ApiError('badRequest', `The default tenant '${tenant.slug}' cannot be deleted in single-tenant mode.`);
  }
  return tenant;
}

/** What deleting the tenant would remove now, per table; changes nothing. Same refusals as the delete. */
export async function previewTenantDeletion(db: Database, id: string, opts: { multiTenantMode: boolean }): Promise<{ tenant: Tenant; rows: TableCounts }> {
  const tenant = await deletableTenant(db, id, opts);
  return { tenant, rows: await countTenantRows(db, id) };
}

/**
 * Deletes a tenant and everything it owns, or (dry run) counts what would go.
 *
 * Why in batches: one `DELETE FROM tenants` would cascade through every child row in a single
 * transaction — for a tenant with a million rows that outlives the statement timeout, holds its
 * row locks and WAL until the end, and if it fails nothing is deleted. Instead the child rows go
 * table by table, children before parents, `batchSize` rows per short `withTenant` transaction
 * (row-level security confines each to this tenant, and only this tenant's rows are locked, so
 * other tenants are never blocked). The tenant row goes last; its cascade then removes only rows
 * written meanwhile. If the process stops half-way, what remains is a smaller tenant that
 * another delete finishes.
 *
 * `tenant.deletion_started` commits before the first batch, so a delete cut short by a crash
 * still left its mark in the log; `tenant.deleted` is written with the tenant row's removal.
 */
export async function deleteTenant(db: Database, origin: EventOrigin, id: string, opts: DeleteOptions): Promise<TenantDeletion> {
  if (opts.dryRun) return { dryRun: true, ...(await previewTenantDeletion(db, id, opts)) };
  const tenant = await deletableTenant(db, id, opts);
  await withTenant(db, id, async (trx) => {
    // Still there (a concurrent delete may have finished since): no intent for a gone tenant.
    if (!(await findTenant(trx, id))) throw tenantNotFound(id);
    await recordEvent(trx, origin, { action: 'tenant.deletion_started', tenantId: id, target: { type: 'tenant', id }, data: { tenant: tenantData(tenant) } });
  });

  const batchSize = opts.batchSize ?? DELETE_BATCH_SIZE;
  const rows = Object.fromEntries(TENANT_TABLES.map((t) => [t, 0])) as TableCounts;
  for (const table of DELETE_ORDER) {
    for (;;) {
      const deleted = await withTenant(db, id, async (trx) => {
        await lockTenantExclusively(trx, id);
        return deleteTenantRowsBatch(trx, table, id, batchSize);
      });
      rows[table] += deleted;
      if (deleted < batchSize) break;
    }
  }
  const gone = await withTenant(db, id, async (trx) => {
    // Anything written to the tenant while the batches ran is removed by this cascade.
    await lockTenantExclusively(trx, id);
    const before = await countTenantRowsIn(trx, id);
    const n = await deleteTenantRow(trx, id);
    if (n === 1) {
      for (const t of TENANT_TABLES) rows[t] += before[t];
      // In the transaction that deletes the tenant row; the event itself outlives the tenant.
      await recordEvent(trx, origin, { action: 'tenant.deleted', tenantId: id, target: { type: 'tenant', id }, data: { tenant: tenantData(tenant), rows } });
    }
    return n;
  });
  // A concurrent delete of the same tenant won the race.
  if (gone === 0) throw tenantNotFound(id);
  return { dryRun: false, tenant, rows };
}
