/** deleteTenant (and its dry run): everything a tenant owns, in short batches, then the tenant row. */
import type { Tenant } from '../../context/entities';
import { countTenantRowsIn, deleteTenantRowsBatch, lockTenantExclusively, type TableCounts } from '../../db/queries/tenant-delete';
import { TENANT_TABLES, type TenantTable } from '../../db/schema';
import { deleteTenantRow, findTenant, patchTenant } from '../../db/queries/tenants';
import { withTenant, type Database } from '../../db/tenant-scope';
import { ApiError } from '../../errors';
import { recordEvent, type EventOrigin } from '../events';
import { getTenant, tenantNotFound } from './get-tenant';

/**
 * What keeps people out, deleted last: removal marks and directory state. Until the tenant row
 * goes, a delete cut short leaves them in place, so nobody removed or deactivated comes back.
 */
const KEPT_TO_THE_END: readonly TenantTable[] = ['member_removals', 'scim_tokens', 'directory_settings', 'directory_users', 'directory_groups', 'directory_group_members'];

/**
 * Tenant tables children before parents (TENANT_TABLES lists parents first), the tables of
 * KEPT_TO_THE_END after all others. Deleting children first means each batch's foreign-key actions
 * find nothing left to cascade, so a batch costs mostly its own rows (a member's directory user
 * only loses its `user_id`).
 */
export const DELETE_ORDER: readonly TenantTable[] = [
  ...[...TENANT_TABLES].reverse().filter((t) => !KEPT_TO_THE_END.includes(t)),
  ...[...TENANT_TABLES].reverse().filter((t) => KEPT_TO_THE_END.includes(t)),
];

/** The reason a tenant closed by its delete carries (operators see it if the delete is cut short). */
export const CLOSED_FOR_DELETION = 'Being deleted: the delete was cut short if this tenant is still here; delete it again.';

/** A committed step of a delete: `closed` (the tenant refuses everyone), then each table's batch. */
export type DeleteStep = { kind: 'closed' } | { kind: 'batch'; table: TenantTable; deleted: number };

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
  /** Called after each committed step, before the next begins (the instance drops its memory of the tenant). */
  afterStep?: (step: DeleteStep) => Promise<void>;
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
 * The first committed step closes the door: the tenant, if active or awaiting approval, becomes
 * `suspended` (refused by every request, as a suspension), with `tenant.deletion_started`, before
 * any row goes; a delete cut short by a crash leaves a closed tenant and its mark in the log.
 * Removal marks and directory state go last (KEPT_TO_THE_END). `tenant.deleted` is written with
 * the tenant row's removal.
 */
export async function deleteTenant(db: Database, origin: EventOrigin, id: string, opts: DeleteOptions): Promise<TenantDeletion> {
  if (opts.dryRun) return { dryRun: true, ...(await previewTenantDeletion(db, id, opts)) };
  const tenant = await deletableTenant(db, id, opts);
  await withTenant(db, id, async (trx) => {
    // Waits for the requests inside the tenant; those after this commit find it closed.
    await lockTenantExclusively(trx, id);
    // Still there (a concurrent delete may have finished since): no intent for a gone tenant.
    const current = await findTenant(trx, id);
    if (!current) throw tenantNotFound(id);
    const open = current.status === 'active' || current.status === 'pending_approval';
    const closed = open ? await patchTenant(trx, id, { status: 'suspended', suspendedAt: 'now', suspensionReason: CLOSED_FOR_DELETION }) : current;
    await recordEvent(trx, origin, {
      action: 'tenant.deletion_started',
      tenantId: id,
      target: { type: 'tenant', id },
      about: { tenant },
      data: { ...(open ? { before: { status: current.status }, after: { status: closed.status } } : {}) },
    });
  });
  await opts.afterStep?.({ kind: 'closed' });

  const batchSize = opts.batchSize ?? DELETE_BATCH_SIZE;
  const rows = Object.fromEntries(TENANT_TABLES.map((t) => [t, 0])) as TableCounts;
  for (const table of DELETE_ORDER) {
    for (;;) {
      const deleted = await withTenant(db, id, async (trx) => {
        await lockTenantExclusively(trx, id);
        return deleteTenantRowsBatch(trx, table, id, batchSize);
      });
      rows[table] += deleted;
      await opts.afterStep?.({ kind: 'batch', table, deleted });
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
      await recordEvent(trx, origin, { action: 'tenant.deleted', tenantId: id, target: { type: 'tenant', id }, about: { tenant }, data: { rows } });
    }
    return n;
  });
  // A concurrent delete of the same tenant won the race.
  if (gone === 0) throw tenantNotFound(id);
  return { dryRun: false, tenant, rows };
}
