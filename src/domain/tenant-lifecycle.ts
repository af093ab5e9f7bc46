/**
 * A tenant's lifecycle (docs/operations.md#tenant-lifecycle): suspend and reactivate, schedule
 * a deletion after a grace period and cancel it, and the scheduled deletion itself. Platform
 * level: the `tenants` row is changed in a service transaction, with its event. What a status
 * means to requests, and which transitions are allowed with which event, is the lifecycle table
 * (src/context/tenant-status.ts); the entry decision (src/tenancy/decide.ts) applies it.
 */
import type { Tenant } from '../context/entities';
import type { EventAction } from '../context/event-actions';
import { TENANT_STATUSES, transitionOf, type TenantStatus } from '../context/tenant-status';
import { daysFromNow, dueDeletions, isDeletionDue, tryLockScheduledDeletion } from '../db/queries/tenant-lifecycle';
import { findTenantForUpdate, patchTenant } from '../db/queries/tenants';
import { withService, type Database, type Transaction } from '../db/tenant-scope';
import { ApiError } from '../errors';
import { recordEvent, type EventOrigin } from './events';
import { deleteTenant, getTenant } from './tenant-admin';

export const DEFAULT_GRACE_DAYS = 30;
export const MAX_GRACE_DAYS = 90;
export const MAX_SUSPENSION_REASON = 500;

/** The actor of a scheduled deletion: the schedule, not a person (the request that made it has its own event). */
export const SCHEDULE_ORIGIN: EventOrigin = {
  actor: { issuer: null, subject: 'scheduled-deletion', email: null, platformAdmin: false },
  requestId: null,
  ip: null,
};

/** The statuses a transition may leave from, for a refusal ("suspended"; "an active" with its article). */
function fromWhich(event: EventAction, article = false): string {
  const from = TENANT_STATUSES.filter((s) => transitionOf(s, event)).join(' or ');
  return article ? `${/^[aeiou]/.test(from) ? 'an' : 'a'} ${from}` : from;
}

const notFound = (id: string) => new ApiError('tenantNotFound', `Tenant with ID ${id} not found.`);

/** The fields an event of this module shows about the lifecycle. */
function lifecycleData(t: Tenant): Record<string, unknown> {
  const { suspendedAt, deleteAfter } = t.lifecycle ?? { suspendedAt: null, deleteAfter: null };
  return {
    suspended_at: suspendedAt ? new Date(suspendedAt).toISOString() : null,
    delete_after: deleteAfter ? new Date(deleteAfter).toISOString() : null,
  };
}

/** Runs `fn` on the tenant locked for update (404 when absent), then returns it with its links. */
async function changeTenant(db: Database, id: string, fn: (trx: Transaction, current: Tenant) => Promise<void>): Promise<Tenant> {
  await withService(db, async (trx) => {
    const current = await findTenantForUpdate(trx, id);
    if (!current) throw notFound(id);
    await fn(trx, current);
  });
  return getTenant(db, id);
}

function refuseDefault(current: Tenant, multiTenantMode: boolean, what: string): void {
  if (current.isDefault && !multiTenantMode) {
    throw new ApiError('badRequest', `The default tenant '${current.slug}' cannot be ${what} in single-tenant mode: every request uses it.`);
  }
}

/**
 * Suspends an active tenant: every tenant-scoped request to it is refused (403 `Tenant
 * suspended`) until it is reactivated; its data is kept. The reason is for operators only.
 */
export async function suspendTenant(db: Database, origin: EventOrigin, id: string, reason: string, opts: { multiTenantMode: boolean }): Promise<Tenant> {
  return changeTenant(db, id, async (trx, current) => {
    refuseDefault(current, opts.multiTenantMode, 'suspended');
    const step = transitionOf(current.status, 'tenant.suspended');
    if (!step || step.to === 'previous') {
      throw new ApiError('conflict', `Tenant '${current.slug}' is ${current.status}; only ${fromWhich('tenant.suspended', true)} tenant can be suspended.`);
    }
    const row = await patchTenant(trx, id, { status: step.to, suspendedAt: 'now', suspensionReason: reason });
    await recordEvent(trx, origin, {
      action: step.event,
      tenantId: id,
      target: { type: 'tenant', id },
      about: { tenant: row },
      data: { reason, ...lifecycleData(row), before: { status: current.status }, after: { status: row.status } },
    });
  });
}

/** Reactivates a suspended tenant: its requests are admitted again. */
export async function reactivateTenant(db: Database, origin: EventOrigin, id: string): Promise<Tenant> {
  return changeTenant(db, id, async (trx, current) => {
    const step = transitionOf(current.status, 'tenant.reactivated');
    if (!step || step.to === 'previous') {
      const cancelFirst = transitionOf(current.status, 'tenant.deletion_cancelled') ? ' Cancel its scheduled deletion first.' : '';
      throw new ApiError('conflict', `Tenant '${current.slug}' is ${current.status}, not ${fromWhich('tenant.reactivated')}.${cancelFirst}`);
    }
    const row = await patchTenant(trx, id, { status: step.to, suspendedAt: null, suspensionReason: null });
    await recordEvent(trx, origin, {
      action: step.event,
      tenantId: id,
      target: { type: 'tenant', id },
      about: { tenant: row },
      data: { before: { status: current.status }, after: { status: row.status } },
    });
  });
}

/**
 * Schedules the tenant's deletion `graceDays` from now: until then it is refused like a
 * suspended tenant, and a cancel restores the status it had. Then one instance deletes it
 * (`runDueDeletions`).
 */
export async function scheduleTenantDeletion(db: Database, origin: EventOrigin, id: string, graceDays: number, opts: { multiTenantMode: boolean }): Promise<Tenant> {
  if (!Number.isInteger(graceDays) || graceDays < 1 || graceDays > MAX_GRACE_DAYS) {
    throw new ApiError('validation', `body.grace_days must be an integer from 1 to ${MAX_GRACE_DAYS}.`);
  }
  return changeTenant(db, id, async (trx, current) => {
    refuseDefault(current, opts.multiTenantMode, 'scheduled for deletion');
    const step = transitionOf(current.status, 'tenant.deletion_scheduled');
    if (!step || step.to === 'previous') {
      const after = current.lifecycle?.deleteAfter;
      if (after) throw new ApiError('conflict', `Tenant '${current.slug}' is already scheduled for deletion (after ${new Date(after).toISOString()}); cancel it first to change the date.`);
      throw new ApiError('conflict', `Tenant '${current.slug}' is ${current.status}; it cannot be scheduled for deletion.`);
    }
    const deleteAfter = await daysFromNow(trx, graceDays);
    // The status to restore on cancel: the schedule never starts from a pending deletion.
    const row = await patchTenant(trx, id, { status: step.to, statusBeforeDeletion: current.status as Exclude<TenantStatus, 'pending_deletion'>, deleteAfter });
    await recordEvent(trx, origin, {
      action: step.event,
      tenantId: id,
      target: { type: 'tenant', id },
      about: { tenant: row },
      data: { grace_days: graceDays, ...lifecycleData(row), before: { status: current.status }, after: { status: row.status } },
    });
  });
}

/** Cancels a scheduled deletion: the tenant gets back the status it had (409 while the deletion runs). */
export async function cancelTenantDeletion(db: Database, origin: EventOrigin, id: string): Promise<Tenant> {
  return changeTenant(db, id, async (trx, current) => {
    const step = transitionOf(current.status, 'tenant.deletion_cancelled');
    if (!step) throw new ApiError('conflict', `Tenant '${current.slug}' is ${current.status}; no deletion is scheduled.`);
    if (!(await tryLockScheduledDeletion(trx, id))) throw new ApiError('conflict', `The scheduled deletion of tenant '${current.slug}' is running; it can no longer be cancelled.`);
    const restored = step.to === 'previous' ? current.lifecycle!.statusBeforeDeletion! : step.to;
    const row = await patchTenant(trx, id, { status: restored, statusBeforeDeletion: null, deleteAfter: null });
    await recordEvent(trx, origin, {
      action: step.event,
      tenantId: id,
      target: { type: 'tenant', id },
      about: { tenant: row },
      data: { cancelled_delete_after: new Date(current.lifecycle!.deleteAfter!).toISOString(), before: { status: current.status }, after: { status: row.status } },
    });
  });
}

export interface DueDeletionResult {
  /** Tenants this call deleted. */
  deleted: string[];
  /** Due tenants another instance held (it deletes them) or that a cancel took back. */
  skipped: string[];
}

/**
 * Deletes the tenants whose scheduled deletion is due, each while holding its scheduled-deletion
 * lock in a transaction of its own, so that across instances exactly one runs each deletion and
 * a cancel cannot interleave. The deletion is the immediate delete's (batched, `tenant.deleted`
 * with the schedule as actor).
 */
export async function runDueDeletions(db: Database, opts: { multiTenantMode: boolean; limit?: number; batchSize?: number }): Promise<DueDeletionResult> {
  const due = await withService(db, (trx) => dueDeletions(trx, opts.limit ?? 10), { readOnly: true });
  const result: DueDeletionResult = { deleted: [], skipped: [] };
  for (const id of due) {
    const ran = await withService(db, async (lockTrx) => {
      if (!(await tryLockScheduledDeletion(lockTrx, id))) return false;
      // Re-read under the lock: a cancel or another instance may have finished meanwhile.
      if (!(await isDeletionDue(lockTrx, id))) return false;
      try {
        await deleteTenant(db, SCHEDULE_ORIGIN, id, { multiTenantMode: opts.multiTenantMode, batchSize: opts.batchSize });
      } catch (err) {
        if (err instanceof ApiError && err.kind === 'tenantNotFound') return false; // deleted immediately meanwhile
        throw err;
      }
      return true;
    });
    (ran ? result.deleted : result.skipped).push(id);
  }
  return result;
}
