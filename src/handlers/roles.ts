/**
 * Tag `roles`: the permission catalogue and platform roles (platform admins), a tenant's own
 * roles (its admins, and platform admins through X-Tenant). Rules: docs/roles.md.
 */
import type {
  CreatePermissionData,
  CreatePermissionResponses,
  CreatePlatformRoleData,
  CreatePlatformRoleResponses,
  CreateTenantRoleData,
  CreateTenantRoleResponses,
  DeletePermissionData,
  DeletePermissionResponses,
  DeletePlatformRoleData,
  DeletePlatformRoleResponses,
  DeleteTenantRoleData,
  DeleteTenantRoleResponses,
  GetPlatformRoleData,
  GetPlatformRoleResponses,
  GetTenantRoleData,
  GetTenantRoleResponses,
  ListPermissionsResponses,
  ListPlatformRolesResponses,
  ListTenantRolesResponses,
  UpdatePlatformRoleData,
  UpdatePlatformRoleResponses,
  UpdateTenantRoleData,
  UpdateTenantRoleResponses,
} from '../../generated/types.gen';
import * as roles from '../domain/roles';
import { toPermission, toRole } from './mappers';
import { authenticated, tenantScoped, type HandlerInput, type Reply } from './types';

export const listPermissions = authenticated(async (ctx): Promise<Reply<ListPermissionsResponses>> => ({
  status: 200,
  body: { permissions: (await roles.listPermissions(ctx.services.db)).map(toPermission) },
}));

export const createPermission = authenticated(async (ctx, input: HandlerInput<CreatePermissionData>): Promise<Reply<CreatePermissionResponses>> => {
  const p = await roles.createPermission(ctx.services.db, ctx.origin, { key: input.body.key, description: input.body.description });
  ctx.log.info({ permission: p.key }, 'Permission created');
  return { status: 201, body: toPermission(p) };
});

export const deletePermission = authenticated(async (ctx, input: HandlerInput<DeletePermissionData>): Promise<Reply<DeletePermissionResponses>> => {
  const gone = await roles.deletePermission(ctx.services.db, ctx.origin, input.path.permission_key);
  ctx.log.info({ permission: gone.permission.key, roles: gone.removedFromRoles.length }, 'Permission deleted');
  const { system: _system, ...deleted } = toPermission(gone.permission);
  return { status: 200, body: { ...deleted, removed_from_roles: gone.removedFromRoles.map((r) => ({ tenant_id: r.tenantId, role_key: r.roleKey })) } };
});

export const listPlatformRoles = authenticated(async (ctx): Promise<Reply<ListPlatformRolesResponses>> => ({
  status: 200,
  body: { roles: (await roles.listPlatformRoles(ctx.services.db)).map(toRole) },
}));

export const getPlatformRole = authenticated(async (ctx, input: HandlerInput<GetPlatformRoleData>): Promise<Reply<GetPlatformRoleResponses>> => ({
  status: 200,
  body: toRole(await roles.getPlatformRole(ctx.services.db, input.path.role_key)),
}));

export const createPlatformRole = authenticated(async (ctx, input: HandlerInput<CreatePlatformRoleData>): Promise<Reply<CreatePlatformRoleResponses>> => {
  const role = await roles.createPlatformRole(ctx.services.db, ctx.origin, input.body);
  ctx.log.info({ role: role.key }, 'Platform role created');
  return { status: 201, body: toRole(role) };
});

export const updatePlatformRole = authenticated(async (ctx, input: HandlerInput<UpdatePlatformRoleData>): Promise<Reply<UpdatePlatformRoleResponses>> => {
  const role = await roles.updatePlatformRole(ctx.services.db, ctx.origin, input.path.role_key, input.body);
  ctx.log.info({ role: role.key }, 'Platform role updated');
  return { status: 200, body: toRole(role) };
});

export const deletePlatformRole = authenticated(async (ctx, input: HandlerInput<DeletePlatformRoleData>): Promise<Reply<DeletePlatformRoleResponses>> => {
  const role = await roles.deletePlatformRole(ctx.services.db, ctx.origin, input.path.role_key);
  ctx.log.info({ role: role.key }, 'Platform role deleted');
  return { status: 200, body: toRole(role) };
});

export const listTenantRoles = tenantScoped(async (ctx): Promise<Reply<ListTenantRolesResponses>> => ({
  status: 200,
  body: { roles: (await roles.listTenantRoles(ctx.trx, ctx.tenant.id)).map(toRole) },
}));

export const getTenantRole = tenantScoped(async (ctx, input: HandlerInput<GetTenantRoleData>): Promise<Reply<GetTenantRoleResponses>> => ({
  status: 200,
  body: toRole(await roles.getTenantRole(ctx.trx, ctx.tenant.id, input.path.role_key)),
}));

export const createTenantRole = tenantScoped(async (ctx, input: HandlerInput<CreateTenantRoleData>): Promise<Reply<CreateTenantRoleResponses>> => {
  const role = await roles.createTenantRole(ctx.trx, ctx.origin, ctx.tenant.id, input.body, roles.grantorOf(ctx));
  ctx.log.info({ role: role.key }, 'Tenant role created');
  return { status: 201, body: toRole(role) };
});

export const updateTenantRole = tenantScoped(async (ctx, input: HandlerInput<UpdateTenantRoleData>): Promise<Reply<UpdateTenantRoleResponses>> => {
  const role = await roles.updateTenantRole(ctx.trx, ctx.origin, ctx.tenant.id, input.path.role_key, input.body, roles.grantorOf(ctx));
  ctx.log.info({ role: role.key }, 'Tenant role updated');
  return { status: 200, body: toRole(role) };
});

export const deleteTenantRole = tenantScoped(async (ctx, input: HandlerInput<DeleteTenantRoleData>): Promise<Reply<DeleteTenantRoleResponses>> => {
  const role = await roles.deleteTenantRole(ctx.trx, ctx.origin, ctx.tenant.id, input.path.role_key);
  ctx.log.info({ role: role.key }, 'Tenant role deleted');
  return { status: 200, body: toRole(role) };
});
