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
  'tenant_roles',
  'tenant_role_permissions',
  'member_removals',
  'scim_tokens',
  'directory_settings',
  'directory_users',
  'directory_groups',
  'directory_group_members',
] as const;
export type TenantTable = (typeof TENANT_TABLES)[number];

/** One table of a tenant's data as an export carries it (docs/operations.md#moving-a-tenant-between-deployments). */
export interface TenantDataTable {
  readonly table: string;
  /** The column naming the tenant: `id` for `tenants`, else `tenant_id`. */
  readonly tenantColumn: 'id' | 'tenant_id';
  /** A stable row order (parents' rows come from earlier tables). */
  readonly orderBy: readonly string[];
  /** Columns that never leave the deployment: secrets, and facts of the deployment rather than the tenant. */
  readonly omit: readonly string[];
}

/**
 * Every table holding a tenant's rows, parents before children: the one list an export, an
 * import and their test read. A new table with a `tenant_id` column must be listed here or in
 * NOT_TENANT_DATA (test/api/setup/tenant-export.test.ts compares both with the database).
 */
export const TENANT_DATA_TABLES: readonly TenantDataTable[] = [
  // `is_default` is the deployment's choice of its default tenant, not the tenant's data.
  { table: 'tenants', tenantColumn: 'id', orderBy: ['id'], omit: ['is_default'] },
  { table: 'users', tenantColumn: 'tenant_id', orderBy: ['id'], omit: [] },
  { table: 'boards', tenantColumn: 'tenant_id', orderBy: ['id'], omit: [] },
  { table: 'board_members', tenantColumn: 'tenant_id', orderBy: ['board_id', 'user_id'], omit: [] },
  { table: 'generations', tenantColumn: 'tenant_id', orderBy: ['id'], omit: [] },
  { table: 'provider_configs', tenantColumn: 'tenant_id', orderBy: ['id'], omit: [] },
  { table: 'credit_transactions', tenantColumn: 'tenant_id', orderBy: ['seq', 'id'], omit: [] },
  // An invitation's token is a secret: its hash never leaves (an imported pending invitation is resent).
  { table: 'invitations', tenantColumn: 'tenant_id', orderBy: ['id'], omit: ['token_hash'] },
  { table: 'identity_links', tenantColumn: 'tenant_id', orderBy: ['issuer', 'organization_id'], omit: [] },
  // A tenant's own roles; their permissions must exist in the importing deployment's catalogue.
  { table: 'tenant_roles', tenantColumn: 'tenant_id', orderBy: ['key'], omit: [] },
  { table: 'tenant_role_permissions', tenantColumn: 'tenant_id', orderBy: ['role_key', 'permission_key'], omit: [] },
  // Removal marks move with the tenant, so a removal still sticks on the importing deployment.
  { table: 'member_removals', tenantColumn: 'tenant_id', orderBy: ['issuer', 'subject'], omit: [] },
  { table: 'directory_settings', tenantColumn: 'tenant_id', orderBy: ['tenant_id'], omit: [] },
  { table: 'directory_users', tenantColumn: 'tenant_id', orderBy: ['id'], omit: [] },
  { table: 'directory_groups', tenantColumn: 'tenant_id', orderBy: ['id'], omit: [] },
  { table: 'directory_group_members', tenantColumn: 'tenant_id', orderBy: ['group_id', 'member_id'], omit: [] },
  { table: 'events', tenantColumn: 'tenant_id', orderBy: ['occurred_at', 'id'], omit: [] },
];

/** Tables with a `tenant_id` column that are not the tenant's data, and why they stay. */
export const NOT_TENANT_DATA: Readonly<Record<string, string>> = {
  idempotency_keys: "a caller's replay memory of tenant creations, kept 24 hours",
  retired_slugs: "this deployment's history of slugs it will not hand out again",
  sign_in_handbacks: "sign-ins in flight on this deployment, kept 10 minutes",
  sign_in_identities: "who vouched for a person at this deployment's OpenID provider (accounts are the deployment's, not a tenant's): the person signs in again after a move",
  sso_connections: "secrets and this deployment's URLs registered at the identity provider: a moved tenant's admin connects it again (docs/sso.md)",
  sso_requests: "sign-ins in flight on this deployment, kept 10 minutes",
  sso_settings: "follows its connections: set again once they are connected on the importing deployment (docs/sso.md)",
  scim_tokens: "secrets: a moved tenant's admin mints new SCIM tokens on the importing deployment (docs/directory-sync.md)",
  tenant_domains: "a domain's proof is this deployment's: claim and verify it again on the importing one (docs/domains.md)",
  webhook_deliveries: "this deployment's outbox to the platform's webhook endpoints",
};
