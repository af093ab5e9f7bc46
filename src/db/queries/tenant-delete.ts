/**
 * The batched tenant delete's statements. Each runs in a short `withTenant` transaction, so
 * row-level security confines it to the tenant being deleted and only its rows are locked.
 */
import type { Knex } from 'knex';
import { TENANT_TABLES, type TenantTable } from '../schema';

/** Rows per tenant table. */
export type TableCounts = Record<TenantTable, number>;

/**
 * Takes the tenant's entry lock exclusively for `trx`: waits for the requests in the tenant to
 * finish and holds new ones back until `trx` ends, so a steady stream of requests cannot starve
 * the delete (app_tenant_facts takes the same lock shared).
 */
export async function lockTenantExclusively(trx: Knex.Transaction, tenantId: string): Promise<void> {
  await trx.raw('select app_lock_tenant_exclusive(?)', [tenantId]);
}

/** One statement counting the tenant's rows in every tenant table, inside `trx`. */
export async function countTenantRowsIn(trx: Knex.Transaction, tenantId: string): Promise<TableCounts> {
  const selects = TENANT_TABLES.map((t) => `(select count(*) from ${t} where tenant_id = :id) as ${t}`).join(', ');
  const result = await trx.raw<{ rows: Array<Record<string, string>> }>(`select ${selects}`, { id: tenantId });
  const row = result.rows[0]!;
  return Object.fromEntries(TENANT_TABLES.map((t) => [t, Number(row[t])])) as TableCounts;
}

/**
 * Deletes up to `batchSize` of the tenant's rows from `table`; returns how many went.
 * `ctid = any(array(…))` is a TID scan: the batch is picked through the (tenant_id, …) primary key.
 */
export async function deleteTenantRowsBatch(trx: Knex.Transaction, table: TenantTable, tenantId: string, batchSize: number): Promise<number> {
  if (!(TENANT_TABLES as readonly string[]).includes(table)) throw new Error(`Not a tenant table: ${table}`);
  const r = await trx.raw<{ rowCount: number }>(
    `delete from ${table} where ctid = any(array(select ctid from ${table} where tenant_id = ? limit ?))`,
    [tenantId, batchSize],
  );
  return r.rowCount;
}
