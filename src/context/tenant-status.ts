/**
 * A tenant's lifecycle as one table (docs/operations.md#tenant-lifecycle,
 * docs/architecture-operations.md#adding-a-lifecycle-state): for each status of openapi.yaml's
 * `TenantStatus`, whether a request may enter the tenant, the refusal it answers otherwise, the
 * transitions allowed out of it (the operation that makes each and the event it records), whether
 * create/update may set it directly, and its label. The entry decision (src/tenancy/decide.ts,
 * through src/context/tenant-entry.ts), SCIM, tenant tokens, the lifecycle operations,
 * constraint errors, the console and the CLI all read it; a status added to the contract does not
 * compile until it has its entry here. Type-only imports, so the console may read it as it is.
 */
import type { TenantStatus, TenantStatusUpdate } from '../../generated/types.gen';

export type { TenantStatus, TenantStatusUpdate };

/** Why a request to a tenant of this status is refused, whoever asks (ERROR_KINDS of src/errors.ts). */
export interface StatusRefusal {
  readonly kind: 'tenantPending' | 'tenantSuspended';
  readonly detail: (slug: string) => string;
}

/** The operations of openapi.yaml that change a tenant's status. */
export type LifecycleOperation = 'updateTenant' | 'suspendTenant' | 'reactivateTenant' | 'scheduleTenantDeletion' | 'cancelTenantDeletion';

/** A transition's event: a tenant's (./event-actions.ts lists them from this table). */
export type TenantEventName = `tenant.${string}`;

export interface LifecycleTransition<E extends TenantEventName = TenantEventName> {
  /** The event recorded with it, in the same transaction. */
  readonly event: E;
  /** The status it leads to; `previous`: the one the tenant had before its deletion was scheduled. */
  readonly to: TenantStatus | 'previous';
  readonly operation: LifecycleOperation;
  /** Its route, named to callers who try another way. */
  readonly route: string;
}

/** One state. `settable` must say exactly whether the contract's `TenantStatusUpdate` holds it. */
export type LifecycleState<S extends TenantStatus = TenantStatus, E extends TenantEventName = TenantEventName> = {
  readonly label: string;
  readonly settable: S extends TenantStatusUpdate ? true : false;
  readonly transitions: readonly LifecycleTransition<E>[];
} & ({ readonly enterable: true; readonly refusal: null } | { readonly enterable: false; readonly refusal: StatusRefusal });

export type TenantLifecycle<E extends TenantEventName = TenantEventName> = { readonly [S in TenantStatus]: LifecycleState<S, E> };

const UPDATE = 'PUT /api/setup/tenant/{tenant_id}';
const SCHEDULE_DELETION = {
  event: 'tenant.deletion_scheduled',
  to: 'pending_deletion',
  operation: 'scheduleTenantDeletion',
  route: 'POST /api/setup/tenant/{tenant_id}/scheduled-deletion',
} as const satisfies LifecycleTransition;

const LIFECYCLE = {
  active: {
    label: 'Active',
    enterable: true,
    refusal: null,
    settable: true,
    transitions: [
      { event: 'tenant.updated', to: 'pending_approval', operation: 'updateTenant', route: UPDATE },
      { event: 'tenant.suspended', to: 'suspended', operation: 'suspendTenant', route: 'POST /api/setup/tenant/{tenant_id}/suspend' },
      SCHEDULE_DELETION,
    ],
  },
  pending_approval: {
    label: 'Waiting for approval',
    enterable: false,
    refusal: { kind: 'tenantPending', detail: (slug) => `Tenant '${slug}' is awaiting approval by a platform admin.` },
    settable: true,
    transitions: [{ event: 'tenant.approved', to: 'active', operation: 'updateTenant', route: UPDATE }, SCHEDULE_DELETION],
  },
  suspended: {
    label: 'Suspended',
    enterable: false,
    // The suspension's reason is the operator's note and is never shown here.
    refusal: { kind: 'tenantSuspended', detail: (slug) => `Tenant '${slug}' is suspended; its admins can ask the operator of this service why.` },
    settable: false,
    transitions: [{ event: 'tenant.reactivated', to: 'active', operation: 'reactivateTenant', route: 'POST /api/setup/tenant/{tenant_id}/reactivate' }, SCHEDULE_DELETION],
  },
  pending_deletion: {
    label: 'Scheduled for deletion',
    enterable: false,
    refusal: { kind: 'tenantSuspended', detail: (slug) => `Tenant '${slug}' is suspended: it is scheduled for deletion.` },
    settable: false,
    transitions: [{ event: 'tenant.deletion_cancelled', to: 'previous', operation: 'cancelTenantDeletion', route: 'DELETE /api/setup/tenant/{tenant_id}/scheduled-deletion' }],
  },
} as const satisfies TenantLifecycle;

/** The events the lifecycle's transitions record, as literal types (./event-actions.ts includes them). */
export type LifecycleEvent = (typeof LIFECYCLE)[TenantStatus]['transitions'][number]['event'];

export const TENANT_LIFECYCLE: TenantLifecycle<LifecycleEvent> = LIFECYCLE;

/** Every status, in the table's order. */
export const TENANT_STATUSES = Object.keys(TENANT_LIFECYCLE) as readonly TenantStatus[];

/** Each event a transition records, once, in the table's order. */
export const LIFECYCLE_EVENTS: readonly LifecycleEvent[] = [...new Set(TENANT_STATUSES.flatMap((s) => TENANT_LIFECYCLE[s].transitions.map((t) => t.event)))];

/** The statuses create and update may set directly (the contract's `TenantStatusUpdate`). */
export const SETTABLE_STATUSES = TENANT_STATUSES.filter((s) => TENANT_LIFECYCLE[s].settable) as readonly TenantStatusUpdate[];

/** The transition out of `from` that records `event` (null: not allowed from this status). */
export function transitionOf(from: TenantStatus, event: string): LifecycleTransition<LifecycleEvent> | null {
  return TENANT_LIFECYCLE[from].transitions.find((t) => t.event === event) ?? null;
}

/** The transition `operation` makes from `from` to `to` (null: not allowed). */
export function transitionTo(from: TenantStatus, to: TenantStatus, operation: LifecycleOperation): LifecycleTransition<LifecycleEvent> | null {
  return TENANT_LIFECYCLE[from].transitions.find((t) => t.to === to && t.operation === operation) ?? null;
}

/** The label of a status for people (a status this build does not know is shown as it is). */
export function statusLabel(status: string): string {
  return (TENANT_LIFECYCLE as Partial<Record<string, LifecycleState>>)[status]?.label ?? status;
}

/** True when create and update may set this status directly. */
export function isSettable(status: TenantStatus): status is TenantStatusUpdate {
  return TENANT_LIFECYCLE[status].settable;
}
