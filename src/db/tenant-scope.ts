/**
 * Tenant data is read and written only inside these transactions. `withTenant` sets
 * `app.tenant_id` for the transaction alone (set_config(..., true)), so row-level security
 * confines every statement to that tenant and a pooled connection never carries it further.
 */
import type { Knex } from 'knex';
import { READER_ROLE } from './migrations/001-schema';

/** Runs `fn` in a transaction confined to one tenant by row-level security. */
export async function withTenant<T>(db: Knex, tenantId: string, fn: (trx: Knex.Transaction) => Promise<T>): Promise<T> {
  return db.transaction(async (trx) => {
    await trx.raw("select set_config('app.tenant_id', ?, true)", [tenantId]);
    return fn(trx);
  });
}

/**
 * Runs `fn` in a read-only transaction that sees every tenant's rows (the reader role, which
 * bypasses row-level security and can only SELECT). For platform-wide reads only: the audit,
 * and a caller's own memberships across tenants.
 */
export async function withPlatformRead<T>(db: Knex, fn: (trx: Knex.Transaction) => Promise<T>): Promise<T> {
  return db.transaction(async (trx) => {
    await trx.raw(`set local role ${READER_ROLE}`);
    return fn(trx);
  }, { readOnly: true });
}
