/**
 * The refusal of a tenant that may not be entered, read from the lifecycle table
 * (src/context/tenant-status.ts): the entry decision (src/tenancy/decide.ts), invitation accept
 * and SCIM all answer with it, so a status refuses alike on every path
 * (docs/operations.md#tenant-lifecycle).
 */
import { ApiError } from '../errors';
import { TENANT_LIFECYCLE, type TenantStatus } from './tenant-status';

/** Why a tenant of this status cannot be used, whoever asks (null: it may be entered). */
export function statusRefusal(slug: string, status: TenantStatus): ApiError | null {
  const { refusal } = TENANT_LIFECYCLE[status];
  return refusal && new ApiError(refusal.kind, refusal.detail(slug));
}
