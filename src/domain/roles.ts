/**
 * Permissions and roles (docs/roles.md). Permissions are the product's vocabulary, defined once
 * by platform admins; roles are built from them: platform roles (available in every tenant,
 * `admin` and `member` built in) and a tenant's own roles. A member holds one role key.
 * Every change records its event in its transaction.
 */
import { ADMIN_ROLE, MEMBER_ROLE, type RoleKey } from '../context/roles';
import { ADMINISTRATION_PERMISSIONS, isReservedPermissionKey, isSystemPermission, SYSTEM_PERMISSIONS, SYSTEM_PERMISSION_PREFIX } from '../context/permissions';
import type { Permission, Role } from '../context/entities';
import {
  countPermissions,
  countPlatformRoleHolders,
  countPlatformRoles,
  countTenantRoleHolders,
  countTenantRoles,
  countTenantsWithRoleKey,
  deletePermissionRow,
  selectPermission,
  deletePlatformRoleRow,
  deleteTenantRoleRow,
  insertPermission,
  insertPlatformRole,
  insertTenantRole,
  lockPermissionCatalogue,
  lockPermissionUse,
  lockRoleInTenant,
  lockRoleKeys,
  selectPermissions,
  selectPlatformRole,
  selectPlatformRoles,
  selectRolePermissions,
  selectTenantRole,
  selectTenantRoles,
  selectRolesHoldingPermission,
  setPlatformRolePermissions,
  setTenantRolePermissions,
  unknownPermissions,
  updatePlatformRoleRow,
  updateTenantRoleRow,
  countAdministratorsBesidesRole,
} from '../db/queries/roles';
import { withService, type Database, type Transaction } from '../db/tenant-scope';
import { ApiError } from '../errors';
import { recordEvent, type EventOrigin } from './events';


/** Limits (docs/roles.md#limits). */
export const ROLE_LIMITS = { permissions: 500, platformRoles: 100, tenantRoles: 50, permissionsPerRole: 100 } as const;

const BUILT_IN: readonly RoleKey[] = [ADMIN_ROLE, MEMBER_ROLE];
/** The built-in role that holds every system permission, always (docs/roles.md#system-permissions). */
const HOLDS_EVERY_SYSTEM_PERMISSION: RoleKey = ADMIN_ROLE;

/**
 * Who grants, in a tenant: the permissions of the role they act with, or null for a platform
 * admin (the operator grants anything). A member never grants a system permission their own
 * role does not hold (docs/roles.md#granting-what-you-hold).
 */
export type Grantor = readonly string[] | null;

/** 403 naming the first system permission of `permissions` the grantor does not hold. */
export function checkGrantable(grantor: Grantor, permissions: readonly string[], what: string): void {
  if (grantor === null) return;
  const missing = [...permissions].sort().find((p) => isSystemPermission(p) && !grantor.includes(p));
  if (missing !== undefined) {
    throw new ApiError('accessDenied', `${what} would grant permission '${missing}', which your own role does not hold; a member never grants a permission they do not hold.`);
  }
}

/** The grantor of a tenant request: a platform admin grants anything, a member what their role holds. */
export function grantorOf(ctx: { readonly caller: { readonly isPlatformAdmin: boolean }; readonly membership: { readonly permissions: readonly string[] } | null }): Grantor {
  return ctx.caller.isPlatformAdmin ? null : (ctx.membership?.permissions ?? []);
}

/**
 * 409 when a role change would leave nobody able to administer the tenant's people: no member
 * holding every administration permission. `others` counts the members holding them all
 * besides those the change takes them from.
 */
export function administrationRefusal(others: number): ApiError | null {
  if (others > 0) return null;
  return new ApiError(
    'conflict',
    `This change would leave no member of the tenant holding both ${ADMINISTRATION_PERMISSIONS.map((p) => `'${p}'`).join(' and ')}; give another member a role holding both first.`,
  );
}

/** True when the permissions hold every administration permission. */
export function administers(permissions: readonly string[]): boolean {
  return ADMINISTRATION_PERMISSIONS.every((p) => permissions.includes(p));
}

/** What a role's event carries. */
function roleData(r: Role): Record<string, unknown> {
  return { key: r.key, name: r.name, description: r.description, permissions: r.permissions, scope: r.scope };
}

export async function listPermissions(db: Database): Promise<Permission[]> {
  return withService(db, (trx) => selectPermissions(trx), { readOnly: true });
}

/** Adds a permission to the catalogue: 409 when its key exists or the catalogue is full. */
export async function createPermission(db: Database, origin: EventOrigin, p: { key: string; description?: string }): Promise<Permission> {
  if (isReservedPermissionKey(p.key)) {
    throw new ApiError('validation', `body.key '${p.key}' starts with '${SYSTEM_PERMISSION_PREFIX}', the prefix of the service's own system permissions; a product permission needs another prefix.`);
  }
  return withService(db, async (trx) => {
    await lockPermissionCatalogue(trx);
    if ((await countPermissions(trx)) >= ROLE_LIMITS.permissions) {
      throw new ApiError('conflict', `The catalogue already holds ${ROLE_LIMITS.permissions} permissions, the limit; delete one first.`);
    }
    const made = await insertPermission(trx, { key: p.key, description: p.description ?? '' });
    if (!made) throw new ApiError('conflict', `Permission '${p.key}' already exists.`);
    await recordEvent(trx, origin, { action: 'permission.created', tenantId: null, target: { type: 'permission', id: made.key }, data: { permission: { key: made.key, description: made.description } } });
    return made;
  });
}

/** A role a deleted permission was taken out of: a platform role (tenantId null) or a tenant's own. */
export interface RemovedFromRole {
  readonly tenantId: string | null;
  readonly roleKey: string;
}

/**
 * Deletes a permission and takes it out of every role in the same transaction; answers every
 * role it left, platform and tenant (docs/roles.md).
 */
export async function deletePermission(db: Database, origin: EventOrigin, key: string): Promise<{ permission: Permission; removedFromRoles: RemovedFromRole[] }> {
  return withService(db, async (trx) => {
    if ((await selectPermission(trx, key))?.system) {
      throw new ApiError('validation', `'${key}' is a system permission: it guards the service's own tenant operations and cannot be deleted.`);
    }
    await lockPermissionUse(trx, true);
    const holding = await selectRolesHoldingPermission(trx, key);
    const gone = await deletePermissionRow(trx, key);
    if (!gone) throw new ApiError('notFound', `No permission '${key}' in the catalogue.`);
    const removedFromRoles = holding.map((h) => ({ tenantId: h.tenantId, roleKey: h.roleKey }));
    await recordEvent(trx, origin, {
      action: 'permission.deleted',
      tenantId: null,
      target: { type: 'permission', id: key },
      data: { permission: { key, description: gone.permission.description }, removed_from_roles: removedFromRoles.map((r) => ({ tenant_id: r.tenantId, role_key: r.roleKey })) },
    });
    return { permission: gone.permission, removedFromRoles };
  });
}

/** A role's permissions as asked: repeats once, sorted, every one in the catalogue (400 naming the first unknown). */
async function checkedPermissions(trx: Transaction, permissions: readonly string[]): Promise<string[]> {
  const keys = [...new Set(permissions)].sort();
  if (keys.length > ROLE_LIMITS.permissionsPerRole) {
    throw new ApiError('validation', `A role holds at most ${ROLE_LIMITS.permissionsPerRole} permissions; body.permissions names ${keys.length}.`);
  }
  await lockPermissionUse(trx, false);
  const unknown = await unknownPermissions(trx, keys);
  if (unknown.length > 0) {
    throw new ApiError('validation', `body.permissions names '${unknown[0]}', which is not in the permission catalogue; a platform admin defines permissions (POST /api/setup/permissions).`);
  }
  return keys;
}

/** A `key` in a replacing body must be the role's own: keys never change. */
function checkKeyUnchanged(key: RoleKey, bodyKey: string | undefined): void {
  if (bodyKey !== undefined && bodyKey !== key) throw new ApiError('validation', `A role's key never changes: body.key '${bodyKey}' differs from '${key}'.`);
}

export interface RoleInput {
  readonly key: RoleKey;
  readonly name: string;
  readonly description?: string;
  readonly permissions?: readonly string[];
}

export interface RoleReplacement {
  readonly key?: string;
  readonly name: string;
  readonly description?: string;
  readonly permissions: readonly string[];
}

function heldRefusal(key: RoleKey, held: { members: number; invitations: number }): ApiError | null {
  if (held.members === 0 && held.invitations === 0) return null;
  return new ApiError(
    'conflict',
    `Role '${key}' is held by ${held.members} member(s) and ${held.invitations} pending invitation(s); give them another role (or revoke the invitations) first.`,
  );
}

// ---- platform roles (platform admins) ----

export async function listPlatformRoles(db: Database): Promise<Role[]> {
  return withService(db, (trx) => selectPlatformRoles(trx), { readOnly: true });
}

export async function getPlatformRole(db: Database, key: RoleKey): Promise<Role> {
  const role = await withService(db, (trx) => selectPlatformRole(trx, key), { readOnly: true });
  if (!role) throw new ApiError('notFound', `No platform role '${key}'.`);
  return role;
}

export async function createPlatformRole(db: Database, origin: EventOrigin, input: RoleInput): Promise<Role> {
  return withService(db, async (trx) => {
    await lockRoleKeys(trx);
    if (await selectPlatformRole(trx, input.key)) throw new ApiError('conflict', `Platform role '${input.key}' already exists.`);
    const tenants = await countTenantsWithRoleKey(trx, input.key);
    if (tenants > 0) throw new ApiError('conflict', `${tenants} tenant(s) have an own role '${input.key}'; a platform role needs a key no tenant uses.`);
    if ((await countPlatformRoles(trx)) >= ROLE_LIMITS.platformRoles) {
      throw new ApiError('conflict', `There are already ${ROLE_LIMITS.platformRoles} platform roles, the limit; delete one first.`);
    }
    const permissions = await checkedPermissions(trx, input.permissions ?? []);
    await insertPlatformRole(trx, { key: input.key, name: input.name, description: input.description ?? '' });
    await setPlatformRolePermissions(trx, input.key, permissions);
    const role = (await selectPlatformRole(trx, input.key))!;
    await recordEvent(trx, origin, { action: 'role.created', tenantId: null, target: { type: 'role', id: role.key }, data: { role: roleData(role) } });
    return role;
  });
}

export async function updatePlatformRole(db: Database, origin: EventOrigin, key: RoleKey, input: RoleReplacement): Promise<Role> {
  checkKeyUnchanged(key, input.key);
  return withService(db, async (trx) => {
    const before = await selectPlatformRole(trx, key, true);
    if (!before) throw new ApiError('notFound', `No platform role '${key}'.`);
    // The built-in admin keeps every system permission whatever the replacement lists.
    const asked = key === HOLDS_EVERY_SYSTEM_PERMISSION ? [...input.permissions, ...SYSTEM_PERMISSIONS] : input.permissions;
    const permissions = await checkedPermissions(trx, asked);
    await updatePlatformRoleRow(trx, key, { name: input.name, description: input.description ?? '' });
    await setPlatformRolePermissions(trx, key, permissions);
    const after = (await selectPlatformRole(trx, key))!;
    await recordEvent(trx, origin, { action: 'role.updated', tenantId: null, target: { type: 'role', id: key }, data: { role: roleData(after), before: roleData(before), after: roleData(after) } });
    return after;
  });
}

export async function deletePlatformRole(db: Database, origin: EventOrigin, key: RoleKey): Promise<Role> {
  if (BUILT_IN.includes(key)) throw new ApiError('validation', `The built-in role '${key}' cannot be deleted; its name, description and permissions can be edited.`);
  return withService(db, async (trx) => {
    const role = await selectPlatformRole(trx, key, true);
    if (!role) throw new ApiError('notFound', `No platform role '${key}'.`);
    const refusal = heldRefusal(key, await countPlatformRoleHolders(trx, key));
    if (refusal) throw refusal;
    await deletePlatformRoleRow(trx, key);
    await recordEvent(trx, origin, { action: 'role.deleted', tenantId: null, target: { type: 'role', id: key }, data: { role: roleData(role) } });
    return role;
  });
}

// ---- a tenant's roles (tenant admins; platform admins through X-Tenant), in the tenant's transaction ----

/** The platform roles and the tenant's own. */
export async function listTenantRoles(trx: Transaction, tenantId: string): Promise<Role[]> {
  return [...(await selectPlatformRoles(trx)), ...(await selectTenantRoles(trx, tenantId))];
}

export async function getTenantRole(trx: Transaction, tenantId: string, key: RoleKey): Promise<Role> {
  const role = (await selectPlatformRole(trx, key)) ?? (await selectTenantRole(trx, tenantId, key));
  if (!role) throw new ApiError('notFound', `No role '${key}' in this tenant.`);
  return role;
}

function platformRoleHere(key: RoleKey): ApiError {
  return new ApiError('forbidden', `'${key}' is a platform role: platform roles are changed by platform admins under /api/setup/roles only.`);
}

export async function createTenantRole(trx: Transaction, origin: EventOrigin, tenantId: string, input: RoleInput, grantor: Grantor = null): Promise<Role> {
  checkGrantable(grantor, input.permissions ?? [], `Role '${input.key}'`);
  await lockRoleKeys(trx);
  if (await selectPlatformRole(trx, input.key)) throw new ApiError('conflict', `'${input.key}' is a platform role's key; a tenant role needs another key.`);
  if (await selectTenantRole(trx, tenantId, input.key)) throw new ApiError('conflict', `This tenant already has a role '${input.key}'.`);
  if ((await countTenantRoles(trx, tenantId)) >= ROLE_LIMITS.tenantRoles) {
    throw new ApiError('conflict', `This tenant already has ${ROLE_LIMITS.tenantRoles} roles of its own, the limit; delete one first.`);
  }
  const permissions = await checkedPermissions(trx, input.permissions ?? []);
  await insertTenantRole(trx, tenantId, { key: input.key, name: input.name, description: input.description ?? '' });
  await setTenantRolePermissions(trx, tenantId, input.key, permissions);
  const role = (await selectTenantRole(trx, tenantId, input.key))!;
  await recordEvent(trx, origin, { action: 'role.created', tenantId, target: { type: 'role', id: role.key }, data: { role: roleData(role) } });
  return role;
}

export async function updateTenantRole(trx: Transaction, origin: EventOrigin, tenantId: string, key: RoleKey, input: RoleReplacement, grantor: Grantor = null): Promise<Role> {
  if (await selectPlatformRole(trx, key)) throw platformRoleHere(key);
  checkKeyUnchanged(key, input.key);
  // Only what is added is granted: a member may keep, or take away, what they do not hold.
  const before = await selectTenantRole(trx, tenantId, key, true);
  if (!before) throw new ApiError('notFound', `No role '${key}' in this tenant.`);
  checkGrantable(grantor, input.permissions.filter((p) => !before.permissions.includes(p)), `Role '${key}'`);
  const permissions = await checkedPermissions(trx, input.permissions);
  if (administers(before.permissions) && !administers(permissions)) {
    // The role's holders stop administering: somebody else must still do it.
    const refusal = administrationRefusal(await countAdministratorsBesidesRole(trx, tenantId, key, ADMINISTRATION_PERMISSIONS));
    if (refusal) throw refusal;
  }
  await updateTenantRoleRow(trx, tenantId, key, { name: input.name, description: input.description ?? '' });
  await setTenantRolePermissions(trx, tenantId, key, permissions);
  const after = (await selectTenantRole(trx, tenantId, key))!;
  await recordEvent(trx, origin, { action: 'role.updated', tenantId, target: { type: 'role', id: key }, data: { role: roleData(after), before: roleData(before), after: roleData(after) } });
  return after;
}

export async function deleteTenantRole(trx: Transaction, origin: EventOrigin, tenantId: string, key: RoleKey): Promise<Role> {
  if (await selectPlatformRole(trx, key)) throw platformRoleHere(key);
  const role = await selectTenantRole(trx, tenantId, key, true);
  if (!role) throw new ApiError('notFound', `No role '${key}' in this tenant.`);
  const refusal = heldRefusal(key, await countTenantRoleHolders(trx, tenantId, key));
  if (refusal) throw refusal;
  await deleteTenantRoleRow(trx, tenantId, key);
  await recordEvent(trx, origin, { action: 'role.deleted', tenantId, target: { type: 'role', id: key }, data: { role: roleData(role) } });
  return role;
}

/**
 * The role `key` as available in the tenant, locked until the transaction ends (a member or an
 * invitation is being given it); 400 naming it when there is none.
 */
export async function requireRole(trx: Transaction, tenantId: string, key: RoleKey): Promise<Role> {
  const role = await lockRoleInTenant(trx, tenantId, key);
  if (!role) throw new ApiError('validation', `Role '${key}' does not exist in this tenant; GET /api/tenant/roles lists the roles available.`);
  return role;
}

/** Permissions of every role in the tenant, for answers listing several memberships. */
export async function rolePermissionsOf(trx: Transaction, tenantId: string): Promise<Map<RoleKey, readonly string[]>> {
  return selectRolePermissions(trx, tenantId);
}
