/**
 * The statements of a tenant's lifecycle (docs/operations.md#tenant-lifecycle): the due
 * scheduled deletions and the lock that lets one instance run each. Called with service
 * transactions (src/db/tenant-scope.ts `withService`); status changes go through
 * ./tenants.ts `patchTenant`.
 */
import type { Knex } from 'knex';

/** Up to `limit` tenants whose scheduled deletion is due, earliest first. */
export async function dueDeletions(trx: Knex.Transaction, limit: number): Promise<string[]> {
  const rows = (await trx('tenants')
    .select('id')
    .where({ status: 'pending_deletion' })
    .andWhere('delete_after', '<=', trx.fn.now())
    .orderBy([{ column: 'delete_after' }, { column: 'id' }])
    .limit(limit)) as Array<{ id: string }>;
  return rows.map((r) => r.id);
}

/**
 * Takes the tenant's scheduled-deletion lock for `trx` without waiting: true when this
 * transaction holds it. The worker that deletes and a cancel both take it, so a cancel never
 * lands in the middle of a deletion and two instances never run the same one.
 */
export async function tryLockScheduledDeletion(trx: Knex.Transaction, tenantId: string): Promise<boolean> {
  const r = await trx.raw<{ rows: Array<{ ok: boolean }> }>("select pg_try_advisory_xact_lock(hashtextextended('tenant-scheduled-deletion:' || ?, 0)) as ok", [tenantId]);
  return r.rows[0]!.ok;
}

/** Whether the tenant is still pending deletion and due, read inside `trx` (after its lock). */
export async function isDeletionDue(trx: Knex.Transaction, tenantId: string): Promise<boolean> {
  const row = (await trx('tenants')
    .where({ id: tenantId, status: 'pending_deletion' })
    .andWhere('delete_after', '<=', trx.fn.now())
    .first('id')) as { id: string } | undefined;
  return row !== undefined;
}

/** The database's clock `days` from now (the transaction's `now()`), so every instance agrees. */
export async function daysFromNow(trx: Knex.Transaction, days: number): Promise<Date> {
  const r = await trx.raw<{ rows: Array<{ at: Date }> }>('select now() + make_interval(days => ?) as at', [days]);
  return r.rows[0]!.at;
}
