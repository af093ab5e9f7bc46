/**
 * The permission catalogue, platform roles and a tenant's own roles (docs/roles.md), mapped to
 * the domain's `Permission` and `Role`. Platform tables are read and written in a service
 * transaction; tenant roles in the tenant's transaction, under row-level security.
 *
 * Locks: assigning a role locks its row FOR KEY SHARE (`lockRoleInTenant`), deleting one locks
 * it FOR UPDATE before counting its holders, so a role cannot be deleted while an assignment of
 * it commits. Role keys are shared by platform and tenant roles: creating either takes one
 * advisory lock (`lockRoleKeys`), so a key cannot become both at once.
 */
import type { Knex } from 'knex';
import type { Permission, Role, RoleKey } from '../../context/entities';
import { APP_ROLE, READER_ROLE } from '../schema';


interface RoleRow {
  key: string;
  name: string;
  description: string;
  permissions: string[] | null;
  built_in: boolean;
  created_at: Date;
  updated_at: Date;
}

const toRole = (scope: Role['scope']) => (r: RoleRow): Role => ({
  key: r.key,
  name: r.name,
  description: r.description,
  permissions: r.permissions ?? [],
  scope,
  builtIn: r.built_in,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

interface PermissionRow {
  key: string;
  description: string;
  created_at: Date;
  system: boolean;
}
const toPermission = (r: PermissionRow): Permission => ({ key: r.key, description: r.description, createdAt: r.created_at, system: r.system });

// Sorted as JavaScript sorts (code units): keys are ASCII, "C" is byte order.
const PLATFORM_ROLES = `select r.key, r.name, r.description, r.built_in, r.created_at, r.updated_at,
   (select array_agg(p.permission_key::text order by p.permission_key collate "C") from platform_role_permissions p where p.role_key = r.key) as permissions
 from platform_roles r`;
const TENANT_ROLES = `select r.key, r.name, r.description, false as built_in, r.created_at, r.updated_at,
   (select array_agg(p.permission_key::text order by p.permission_key collate "C") from tenant_role_permissions p
     where p.tenant_id = r.tenant_id and p.role_key = r.key) as permissions
 from tenant_roles r`;

/** The catalogue, sorted by key. */
export async function selectPermissions(trx: Knex.Transaction): Promise<Permission[]> {
  const rows = (await trx.raw<{ rows: PermissionRow[] }>('select key, description, created_at, system from permissions order by key collate "C"')).rows;
  return rows.map(toPermission);
}

/** Serializes catalogue growth, so the limit holds under concurrent creates. */
export async function lockPermissionCatalogue(trx: Knex.Transaction): Promise<void> {
  await trx.raw("select pg_advisory_xact_lock(hashtextextended('permission-catalogue', 0))");
}

export async function countPermissions(trx: Knex.Transaction): Promise<number> {
  return Number((await trx.raw<{ rows: Array<{ n: string }> }>('select count(*) as n from permissions')).rows[0]!.n);
}

/** Inserts a permission; undefined when the key exists. */
export async function insertPermission(trx: Knex.Transaction, p: { key: string; description: string }): Promise<Permission | undefined> {
  const rows = (await trx.raw<{ rows: PermissionRow[] }>(
    'insert into permissions (key, description) values (?, ?) on conflict (key) do nothing returning key, description, created_at, system',
    [p.key, p.description],
  )).rows;
  return rows[0] && toPermission(rows[0]);
}

/**
 * Deletes a permission; its rows in every role (platform and every tenant's) go by the foreign
 * keys' cascade, in this statement. Returns it and the platform roles that held it.
 */
export async function deletePermissionRow(trx: Knex.Transaction, key: string): Promise<{ permission: Permission; platformRoles: string[] } | undefined> {
  const held = (await trx.raw<{ rows: Array<{ role_key: string }> }>(
    'select role_key from platform_role_permissions where permission_key = ? order by role_key collate "C"',
    [key],
  )).rows.map((r) => r.role_key);
  const rows = (await trx.raw<{ rows: PermissionRow[] }>('delete from permissions where key = ? and not system returning key, description, created_at, system', [key])).rows;
  return rows[0] && { permission: toPermission(rows[0]), platformRoles: held };
}

/** The catalogue's entry for `key`, if any. */
export async function selectPermission(trx: Knex.Transaction, key: string): Promise<Permission | undefined> {
  const rows = (await trx.raw<{ rows: PermissionRow[] }>('select key, description, created_at, system from permissions where key = ?', [key])).rows;
  return rows[0] && toPermission(rows[0]);
}

/** The keys of `keys` the catalogue does not hold, in the order given. */
export async function unknownPermissions(trx: Knex.Transaction, keys: readonly string[]): Promise<string[]> {
  if (keys.length === 0) return [];
  const known = new Set(
    (await trx.raw<{ rows: Array<{ key: string }> }>('select key from permissions where key = any(?)', [keys as string[]])).rows.map((r) => r.key),
  );
  return keys.filter((k) => !known.has(k));
}

/**
 * Giving roles permissions (shared: such writes never wait for each other) against deleting a
 * permission (exclusive): a deletion waits for the role writes in flight to commit, and role
 * writes after it check the catalogue once it has committed, so what a deletion reports as taken
 * away is all it takes away.
 */
export async function lockPermissionUse(trx: Knex.Transaction, exclusive: boolean): Promise<void> {
  await trx.raw(`select ${exclusive ? 'pg_advisory_xact_lock' : 'pg_advisory_xact_lock_shared'}(hashtextextended('permission-use', 0))`);
}

/** Serializes role creation (platform and tenant), so a key is never both and limits hold. */
export async function lockRoleKeys(trx: Knex.Transaction): Promise<void> {
  await trx.raw("select pg_advisory_xact_lock(hashtextextended('role-keys', 0))");
}

/** Platform roles, built-in first, then by key. */
export async function selectPlatformRoles(trx: Knex.Transaction): Promise<Role[]> {
  const rows = (await trx.raw<{ rows: RoleRow[] }>(`${PLATFORM_ROLES} order by r.built_in desc, r.key collate "C"`)).rows;
  return rows.map(toRole('platform'));
}

/** One platform role; `forUpdate` locks it (edits and deletes). */
export async function selectPlatformRole(trx: Knex.Transaction, key: string, forUpdate = false): Promise<Role | undefined> {
  const rows = (await trx.raw<{ rows: RoleRow[] }>(`${PLATFORM_ROLES} where r.key = ?${forUpdate ? ' for update of r' : ''}`, [key])).rows;
  return rows[0] && toRole('platform')(rows[0]);
}

export async function countPlatformRoles(trx: Knex.Transaction): Promise<number> {
  return Number((await trx.raw<{ rows: Array<{ n: string }> }>('select count(*) as n from platform_roles')).rows[0]!.n);
}

export async function insertPlatformRole(trx: Knex.Transaction, r: { key: string; name: string; description: string }): Promise<void> {
  await trx.raw('insert into platform_roles (key, name, description) values (?, ?, ?)', [r.key, r.name, r.description]);
}

export async function updatePlatformRoleRow(trx: Knex.Transaction, key: string, r: { name: string; description: string }): Promise<void> {
  await trx.raw('update platform_roles set name = ?, description = ?, updated_at = now() where key = ?', [r.name, r.description, key]);
}

/** Replaces a platform role's permissions (keys already checked against the catalogue). */
export async function setPlatformRolePermissions(trx: Knex.Transaction, key: string, permissions: readonly string[]): Promise<void> {
  await trx.raw('delete from platform_role_permissions where role_key = ?', [key]);
  if (permissions.length > 0) {
    await trx.raw('insert into platform_role_permissions (role_key, permission_key) select ?, unnest(?::text[])', [key, permissions as string[]]);
  }
}

export async function deletePlatformRoleRow(trx: Knex.Transaction, key: string): Promise<void> {
  await trx.raw('delete from platform_roles where key = ?', [key]);
}

/**
 * Reads across every tenant within `trx`: the reader role (BYPASSRLS, SELECT only) for the
 * statements of `fn`, then the runtime role again. For the few platform writes whose rule is
 * about every tenant's rows (a platform role's holders, a key used by a tenant role).
 */
async function acrossTenants<T>(trx: Knex.Transaction, fn: () => Promise<T>): Promise<T> {
  await trx.raw("select set_config('role', ?, true)", [READER_ROLE]);
  const result = await fn();
  await trx.raw("select set_config('role', ?, true)", [APP_ROLE]);
  return result;
}

/** A role that holds a permission: a platform role (tenantId null) or a tenant's own. */
export interface RoleHolding {
  readonly tenantId: string | null;
  readonly roleKey: string;
}

/**
 * Every role holding the permission `key`, platform roles first (by key), then tenants' own (by
 * tenant id, then key), read across every tenant. Called after `lockPermissionUse(trx, true)`,
 * so no role being given a permission is still in flight: the list is exactly what a deletion in
 * the same transaction takes away.
 */
export async function selectRolesHoldingPermission(trx: Knex.Transaction, key: string): Promise<RoleHolding[]> {
  const platform = (await trx.raw<{ rows: Array<{ role_key: string }> }>(
    'select role_key from platform_role_permissions where permission_key = ? order by role_key collate "C"',
    [key],
  )).rows.map((r) => ({ tenantId: null, roleKey: r.role_key }));
  const tenants = await acrossTenants(trx, async () =>
    (await trx.raw<{ rows: Array<{ tenant_id: string; role_key: string }> }>(
      'select tenant_id, role_key from tenant_role_permissions where permission_key = ? order by tenant_id, role_key collate "C"',
      [key],
    )).rows.map((r) => ({ tenantId: r.tenant_id, roleKey: r.role_key })),
  );
  return [...platform, ...tenants];
}

/** Members and pending invitations of every tenant that hold the platform role `key`. */
export async function countPlatformRoleHolders(trx: Knex.Transaction, key: string): Promise<{ members: number; invitations: number }> {
  return acrossTenants(trx, () => countHolders(trx, null, key));
}

/** How many tenants have an own role with this key. */
export async function countTenantsWithRoleKey(trx: Knex.Transaction, key: string): Promise<number> {
  return acrossTenants(trx, async () => Number((await trx.raw<{ rows: Array<{ n: string }> }>('select count(*) as n from tenant_roles where key = ?', [key])).rows[0]!.n));
}

async function countHolders(trx: Knex.Transaction, tenantId: string | null, key: string): Promise<{ members: number; invitations: number }> {
  const scope = tenantId === null ? '' : ' and tenant_id = ?';
  const binds = tenantId === null ? [key, key] : [key, tenantId, key, tenantId];
  const row = (await trx.raw<{ rows: Array<{ members: string; invitations: string }> }>(
    `select (select count(*) from users where role = ?${scope}) as members,
            (select count(*) from invitations where status = 'pending' and role = ?${scope}) as invitations`,
    binds,
  )).rows[0]!;
  return { members: Number(row.members), invitations: Number(row.invitations) };
}

/** Members and pending invitations of the tenant that hold its role `key`. */
export async function countTenantRoleHolders(trx: Knex.Transaction, tenantId: string, key: string): Promise<{ members: number; invitations: number }> {
  return countHolders(trx, tenantId, key);
}

/** The tenant's own roles, by key. */
export async function selectTenantRoles(trx: Knex.Transaction, tenantId: string): Promise<Role[]> {
  const rows = (await trx.raw<{ rows: RoleRow[] }>(`${TENANT_ROLES} where r.tenant_id = ? order by r.key collate "C"`, [tenantId])).rows;
  return rows.map(toRole('tenant'));
}

export async function selectTenantRole(trx: Knex.Transaction, tenantId: string, key: string, forUpdate = false): Promise<Role | undefined> {
  const rows = (await trx.raw<{ rows: RoleRow[] }>(`${TENANT_ROLES} where r.tenant_id = ? and r.key = ?${forUpdate ? ' for update of r' : ''}`, [tenantId, key])).rows;
  return rows[0] && toRole('tenant')(rows[0]);
}

export async function countTenantRoles(trx: Knex.Transaction, tenantId: string): Promise<number> {
  return Number((await trx.raw<{ rows: Array<{ n: string }> }>('select count(*) as n from tenant_roles where tenant_id = ?', [tenantId])).rows[0]!.n);
}

export async function insertTenantRole(trx: Knex.Transaction, tenantId: string, r: { key: string; name: string; description: string }): Promise<void> {
  await trx.raw('insert into tenant_roles (tenant_id, key, name, description) values (?, ?, ?, ?)', [tenantId, r.key, r.name, r.description]);
}

export async function updateTenantRoleRow(trx: Knex.Transaction, tenantId: string, key: string, r: { name: string; description: string }): Promise<void> {
  await trx.raw('update tenant_roles set name = ?, description = ?, updated_at = now() where tenant_id = ? and key = ?', [r.name, r.description, tenantId, key]);
}

export async function setTenantRolePermissions(trx: Knex.Transaction, tenantId: string, key: string, permissions: readonly string[]): Promise<void> {
  await trx.raw('delete from tenant_role_permissions where tenant_id = ? and role_key = ?', [tenantId, key]);
  if (permissions.length > 0) {
    await trx.raw('insert into tenant_role_permissions (tenant_id, role_key, permission_key) select ?, ?, unnest(?::text[])', [tenantId, key, permissions as string[]]);
  }
}

export async function deleteTenantRoleRow(trx: Knex.Transaction, tenantId: string, key: string): Promise<void> {
  await trx.raw('delete from tenant_roles where tenant_id = ? and key = ?', [tenantId, key]);
}

/**
 * The role `key` as available in the tenant (a platform role, else the tenant's own), locked FOR
 * KEY SHARE until the transaction ends: a member or invitation given it commits before the
 * role can be deleted. Undefined when no such role.
 */
export async function lockRoleInTenant(trx: Knex.Transaction, tenantId: string, key: string): Promise<Role | undefined> {
  const platform = (await trx.raw<{ rows: RoleRow[] }>(`${PLATFORM_ROLES} where r.key = ? for key share of r`, [key])).rows[0];
  if (platform) return toRole('platform')(platform);
  const own = (await trx.raw<{ rows: RoleRow[] }>(`${TENANT_ROLES} where r.tenant_id = ? and r.key = ? for key share of r`, [tenantId, key])).rows[0];
  return own && toRole('tenant')(own);
}

/** The permissions of every role available in the tenant, by role key (member lists). */
export async function selectRolePermissions(trx: Knex.Transaction, tenantId: string): Promise<Map<RoleKey, readonly string[]>> {
  const rows = (await trx.raw<{ rows: Array<{ key: string; permissions: string[] | null }> }>(
    `select key, permissions from (${PLATFORM_ROLES}) p union all select key, permissions from (${TENANT_ROLES} where r.tenant_id = ?) t`,
    [tenantId],
  )).rows;
  return new Map(rows.map((r) => [r.key, r.permissions ?? []]));
}

/**
 * Members of the tenant whose role is not `key` and holds every one of `permissions`; the
 * tenant's member rows are locked FOR NO KEY UPDATE meanwhile (in id order, like membership
 * changes), so a concurrent role assignment waits and then sees the role's new permissions.
 */
export async function countAdministratorsBesidesRole(trx: Knex.Transaction, tenantId: string, key: string, permissions: readonly string[]): Promise<number> {
  const rows = (await trx.raw<{ rows: Array<{ role: string; holds_all: boolean }> }>(
    `with held as (
       select role_key as key, permission_key from platform_role_permissions
       union all
       select role_key, permission_key from tenant_role_permissions where tenant_id = ?
     )
     select u.role,
            (select count(distinct h.permission_key) from held h where h.key = u.role and h.permission_key = any(?::text[])) = ? as holds_all
       from users u where u.tenant_id = ? and u.role <> ?
      order by u.id for no key update of u`,
    [tenantId, permissions as string[], new Set(permissions).size, tenantId, key],
  )).rows;
  return rows.filter((r) => r.holds_all).length;
}
