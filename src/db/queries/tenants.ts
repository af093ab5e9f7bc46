/**
 * Tenant rows read and changed by the platform admin's updates. Called with a service
 * transaction (src/db/tenant-scope.ts `withService`).
 */
import type { Knex } from 'knex';
import { TenantRow } from '../models';

/**
 * The tenant, locked FOR NO KEY UPDATE: serialises updates of this tenant without waiting for
 * its in-flight requests (they hold it FOR KEY SHARE). Undefined when absent.
 */
export async function findTenantForUpdate(trx: Knex.Transaction, id: string): Promise<TenantRow | undefined> {
  return TenantRow.query(trx).findById(id).forNoKeyUpdate();
}

/** Writes `changes` to the tenant and returns the row as stored. */
export async function patchTenant(trx: Knex.Transaction, id: string, changes: Partial<TenantRow>): Promise<TenantRow> {
  const [row] = await TenantRow.query(trx).where({ id }).patch(changes).returning('*');
  return row!;
}
