/**
 * The tenant module (docs/tenants.md#tenant-administration): create (with Idempotency-Key),
 * list, get, update and delete (batched, with a dry run), one file per operation under
 * tenant-admin/. Platform-level: the `tenants` table has no row-level security, while every
 * tenant-owned row is touched only inside `withTenant`.
 */
export { IDEMPOTENCY_WINDOW_HOURS, type IdempotencyInput } from './idempotency';
export {
  createRequestHash,
  createTenant,
  createTenantWithSampleData,
  type CreateTenantInput,
  type TenantCreation,
} from './tenant-admin/create-tenant';
export { containsPattern, DEFAULT_PAGE_SIZE, listTenants, MAX_PAGE_SIZE, type ListTenantsInput, type TenantPage } from './tenant-admin/list-tenants';
export { getTenant } from './tenant-admin/get-tenant';
export { updateTenant, type TenantPatch } from './tenant-admin/update-tenant';
export {
  countTenantRows,
  DELETE_BATCH_SIZE,
  DELETE_ORDER,
  deleteTenant,
  previewTenantDeletion,
  type DeleteOptions,
  type DeleteStep,
  type TableCounts,
  type TenantDeletion,
} from './tenant-admin/delete-tenant';
