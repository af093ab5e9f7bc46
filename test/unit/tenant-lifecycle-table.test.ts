/**
 * The lifecycle table (docs/architecture-operations.md#adding-a-lifecycle-state) agrees with the contract:
 * its states are the `TenantStatus` enum, each transition's route is its operation's, the
 * settable states are `TenantStatusUpdate`, and every non-enterable state refuses through the
 * one entry refusal.
 */
import { loadOpenApiDocument } from '../../src/openapi-document';
import { statusRefusal } from '../../src/context/tenant-entry';
import { SETTABLE_STATUSES, TENANT_LIFECYCLE, TENANT_STATUSES, statusLabel } from '../../src/context/tenant-status';
import { ERROR_KINDS } from '../../src/errors';

type Doc = { paths: Record<string, Record<string, { operationId?: string }>>; components: { schemas: Record<string, { enum?: string[] }> } };
const doc = loadOpenApiDocument() as unknown as Doc;

function routeOf(operationId: string): string | null {
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(item)) if (op?.operationId === operationId) return `${method.toUpperCase()} ${path}`;
  }
  return null;
}

describe('the tenant lifecycle table', () => {
  it('has exactly the states of TenantStatus, and the settable ones are TenantStatusUpdate', () => {
    expect([...TENANT_STATUSES].sort()).toEqual([...(doc.components.schemas.TenantStatus.enum ?? [])].sort());
    expect([...SETTABLE_STATUSES].sort()).toEqual([...(doc.components.schemas.TenantStatusUpdate.enum ?? [])].sort());
  });

  it("names each transition's operation by its route in openapi.yaml, and leads to a state of the table", () => {
    for (const s of TENANT_STATUSES) {
      for (const t of TENANT_LIFECYCLE[s].transitions) {
        expect({ from: s, event: t.event, route: routeOf(t.operation) }).toEqual({ from: s, event: t.event, route: t.route });
        expect(t.to === 'previous' || TENANT_STATUSES.includes(t.to)).toBe(true);
      }
    }
  });

  it('refuses every state that may not be entered, with an error of the catalogue naming the tenant', () => {
    for (const s of TENANT_STATUSES) {
      const refusal = statusRefusal('acme', s);
      if (TENANT_LIFECYCLE[s].enterable) {
        expect(refusal).toBeNull();
      } else {
        expect(refusal?.kind).toBe(TENANT_LIFECYCLE[s].refusal?.kind);
        expect(ERROR_KINDS[refusal!.kind].status).toBe(403);
        expect(refusal?.detail ?? '').toContain("'acme'");
      }
    }
  });

  it('labels each state, and shows an unknown status as it is', () => {
    expect(statusLabel('pending_approval')).toBe('Waiting for approval');
    expect(statusLabel('no_such_status')).toBe('no_such_status');
  });
});
