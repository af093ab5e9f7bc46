/**
 * A tenant's status (docs/operations.md#tenant-lifecycle): `active`, `pending_approval`
 * (self-registered, awaiting a platform admin), `suspended` and `pending_deletion`. Only an
 * active tenant is entered; src/tenancy/decide.ts refuses the others. No imports, so every layer
 * (and the console) may read it.
 */
export const TENANT_STATUSES = ['active', 'pending_approval', 'suspended', 'pending_deletion'] as const;
export type TenantStatus = (typeof TENANT_STATUSES)[number];
