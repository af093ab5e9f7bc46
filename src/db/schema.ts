/**
 * Names shared by the running service and its tests. Released migrations never import these:
 * they spell their tables and roles literally, so a change here cannot alter what an old
 * migration does on a fresh database.
 */

/** The runtime role: no BYPASSRLS, so row-level security applies to everything the service does. */
export const APP_ROLE = 'tenant_service_app';
/** The read-only platform role that bypasses row-level security (audit, a caller's own memberships). */
export const READER_ROLE = 'tenant_service_reader';

/** Tenant-owned tables, parents before children. */
export const TENANT_TABLES = [
  'users',
  'boards',
  'board_members',
  'generations',
  'provider_configs',
  'credit_transactions',
  'invitations',
] as const;
export type TenantTable = (typeof TENANT_TABLES)[number];
