/**
 * Type-level fixture, checked by `npm run typecheck` (never run): each `@ts-expect-error` below
 * proves that tsc refuses a lifecycle table that does not match openapi.yaml's `TenantStatus`
 * (docs/architecture-operations.md#adding-a-lifecycle-state). If a mistake ever compiles, its directive is
 * unused and the typecheck fails.
 */
import type { TenantStatus } from '../../generated/types.gen';
import { TENANT_LIFECYCLE, type LifecycleState, type TenantLifecycle } from '../../src/context/tenant-status';
import type { EventAction } from '../../src/context/event-actions';

// The real table compiles.
export const ok: TenantLifecycle = TENANT_LIFECYCLE;

// 1. A status of the contract without its entry.
const { suspended: _dropped, ...missingOne } = TENANT_LIFECYCLE;
// @ts-expect-error suspended has no entry
export const missing: TenantLifecycle = missingOne;

// 2. A status added to the contract's enum: the table as it is no longer covers it.
type WiderStatus = TenantStatus | 'no_such_status';
// @ts-expect-error no_such_status has no entry
export const added: { readonly [S in WiderStatus]: LifecycleState } = TENANT_LIFECYCLE;

// 3. A status that refuses entry without saying how.
// @ts-expect-error a state that is not enterable needs its refusal
export const noRefusal: TenantLifecycle = { ...TENANT_LIFECYCLE, suspended: { ...TENANT_LIFECYCLE.suspended, refusal: null } };

// 4. `settable` disagreeing with the contract's TenantStatusUpdate.
// @ts-expect-error suspended is not in TenantStatusUpdate
export const wrongSettable: TenantLifecycle = { ...TENANT_LIFECYCLE, suspended: { ...TENANT_LIFECYCLE.suspended, settable: true } };

// 5. A transition recording an event that is not a tenant's (a new tenant event is declared by
// its transition: the event catalogue takes it from the table).
export const notATenantEvent: TenantLifecycle = {
  ...TENANT_LIFECYCLE,
  // @ts-expect-error member.archived is not a tenant event
  suspended: { ...TENANT_LIFECYCLE.suspended, transitions: [{ event: 'member.archived', to: 'active', operation: 'reactivateTenant', route: 'POST /x' }] },
};

// 6. An event the catalogue lists only because a transition records it: it is an EventAction.
export const derived: EventAction = 'tenant.deletion_cancelled';
// @ts-expect-error nothing records tenant.no_such_event
export const notDerived: EventAction = 'tenant.no_such_event';
