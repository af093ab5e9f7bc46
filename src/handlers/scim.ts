/**
 * Tag `scim`: SCIM 2.0 for a tenant's directory (docs/directory-sync.md), authenticated by the
 * tenant's SCIM token (x-access scimToken); every reply is `application/scim+json`, its body
 * typed by the generated type of its operation (the domain builds them from those types).
 */
import type {
  CreateScimGroupData,
  CreateScimGroupResponses,
  CreateScimUserData,
  CreateScimUserResponses,
  DeleteScimGroupData,
  DeleteScimGroupResponses,
  DeleteScimUserData,
  DeleteScimUserResponses,
  GetScimGroupData,
  GetScimGroupResponses,
  GetScimResourceTypeData,
  GetScimResourceTypeResponses,
  GetScimSchemaData,
  GetScimSchemaResponses,
  GetScimServiceProviderConfigResponses,
  GetScimUserData,
  GetScimUserResponses,
  ListScimGroupsData,
  ListScimGroupsResponses,
  ListScimResourceTypesResponses,
  ListScimSchemasResponses,
  ListScimUsersData,
  ListScimUsersResponses,
  ReplaceScimGroupData,
  ReplaceScimGroupResponses,
  ReplaceScimUserData,
  ReplaceScimUserResponses,
  SearchScimGroupsData,
  SearchScimGroupsResponses,
  SearchScimUsersData,
  SearchScimUsersResponses,
  UpdateScimGroupData,
  UpdateScimGroupResponses,
  UpdateScimUserData,
  UpdateScimUserResponses,
} from '../../generated/types.gen';
import type { ScimContext } from '../context/request';
import * as discovery from '../domain/scim/discovery';
import * as groups from '../domain/scim/groups';
import * as users from '../domain/scim/users';
import { scimOperation, type HandlerInput, type Reply } from './types';

const SCIM_JSON = { 'Content-Type': 'application/scim+json; charset=utf-8' } as const;

function scope(ctx: ScimContext): users.ScimScope {
  return { trx: ctx.trx, origin: ctx.origin, tenantId: ctx.tenantId, base: ctx.base };
}

export const getScimServiceProviderConfig = scimOperation(async (ctx): Promise<Reply<GetScimServiceProviderConfigResponses>> => ({
  status: 200,
  body: discovery.serviceProviderConfig(ctx.base),
  headers: SCIM_JSON,
}));

export const listScimResourceTypes = scimOperation(async (ctx): Promise<Reply<ListScimResourceTypesResponses>> => ({ status: 200, body: discovery.resourceTypes(ctx.base), headers: SCIM_JSON }));

export const getScimResourceType = scimOperation(async (ctx, input: HandlerInput<GetScimResourceTypeData>): Promise<Reply<GetScimResourceTypeResponses>> => ({
  status: 200,
  body: discovery.getResourceType(ctx.base, input.path.name),
  headers: SCIM_JSON,
}));

export const listScimSchemas = scimOperation(async (ctx): Promise<Reply<ListScimSchemasResponses>> => ({ status: 200, body: discovery.schemas(ctx.base), headers: SCIM_JSON }));

export const getScimSchema = scimOperation(async (ctx, input: HandlerInput<GetScimSchemaData>): Promise<Reply<GetScimSchemaResponses>> => ({
  status: 200,
  body: discovery.getSchema(ctx.base, input.path.urn),
  headers: SCIM_JSON,
}));

export const listScimUsers = scimOperation(async (ctx, input: HandlerInput<ListScimUsersData>): Promise<Reply<ListScimUsersResponses>> => ({
  status: 200,
  body: await users.listUsers(scope(ctx), input.query),
  headers: SCIM_JSON,
}));

export const searchScimUsers = scimOperation(async (ctx, input: HandlerInput<SearchScimUsersData>): Promise<Reply<SearchScimUsersResponses>> => ({
  status: 200,
  body: await users.listUsers(scope(ctx), input.body),
  headers: SCIM_JSON,
}));

export const createScimUser = scimOperation(async (ctx, input: HandlerInput<CreateScimUserData>): Promise<Reply<CreateScimUserResponses>> => {
  const user = await users.createUser(scope(ctx), input.body);
  ctx.log.info({ directory_user_id: user.id }, 'Directory user created');
  return { status: 201, body: user, headers: { ...SCIM_JSON, Location: user.meta.location ?? '' } };
});

export const getScimUser = scimOperation(async (ctx, input: HandlerInput<GetScimUserData>): Promise<Reply<GetScimUserResponses>> => ({
  status: 200,
  body: await users.getUser(scope(ctx), input.path.id, input.query),
  headers: SCIM_JSON,
}));

export const replaceScimUser = scimOperation(async (ctx, input: HandlerInput<ReplaceScimUserData>): Promise<Reply<ReplaceScimUserResponses>> => ({
  status: 200,
  body: await users.replaceUser(scope(ctx), input.path.id, input.body),
  headers: SCIM_JSON,
}));

export const updateScimUser = scimOperation(async (ctx, input: HandlerInput<UpdateScimUserData>): Promise<Reply<UpdateScimUserResponses>> => ({
  status: 200,
  body: await users.patchUser(scope(ctx), input.path.id, input.body),
  headers: SCIM_JSON,
}));

export const deleteScimUser = scimOperation(async (ctx, input: HandlerInput<DeleteScimUserData>): Promise<Reply<DeleteScimUserResponses>> => {
  await users.deleteUser(scope(ctx), input.path.id);
  ctx.log.info({ directory_user_id: input.path.id }, 'Directory user deleted');
  return { status: 204, body: undefined };
});

export const listScimGroups = scimOperation(async (ctx, input: HandlerInput<ListScimGroupsData>): Promise<Reply<ListScimGroupsResponses>> => ({
  status: 200,
  body: await groups.listGroups(scope(ctx), input.query),
  headers: SCIM_JSON,
}));

export const searchScimGroups = scimOperation(async (ctx, input: HandlerInput<SearchScimGroupsData>): Promise<Reply<SearchScimGroupsResponses>> => ({
  status: 200,
  body: await groups.listGroups(scope(ctx), input.body),
  headers: SCIM_JSON,
}));

export const createScimGroup = scimOperation(async (ctx, input: HandlerInput<CreateScimGroupData>): Promise<Reply<CreateScimGroupResponses>> => {
  const group = await groups.createGroup(scope(ctx), input.body);
  return { status: 201, body: group, headers: { ...SCIM_JSON, Location: group.meta.location ?? '' } };
});

export const getScimGroup = scimOperation(async (ctx, input: HandlerInput<GetScimGroupData>): Promise<Reply<GetScimGroupResponses>> => ({
  status: 200,
  body: await groups.getGroup(scope(ctx), input.path.id, input.query),
  headers: SCIM_JSON,
}));

export const replaceScimGroup = scimOperation(async (ctx, input: HandlerInput<ReplaceScimGroupData>): Promise<Reply<ReplaceScimGroupResponses>> => ({
  status: 200,
  body: await groups.replaceGroup(scope(ctx), input.path.id, input.body),
  headers: SCIM_JSON,
}));

export const updateScimGroup = scimOperation(async (ctx, input: HandlerInput<UpdateScimGroupData>): Promise<Reply<UpdateScimGroupResponses>> => ({
  status: 200,
  body: await groups.patchGroup(scope(ctx), input.path.id, input.body),
  headers: SCIM_JSON,
}));

export const deleteScimGroup = scimOperation(async (ctx, input: HandlerInput<DeleteScimGroupData>): Promise<Reply<DeleteScimGroupResponses>> => {
  await groups.deleteGroup(scope(ctx), input.path.id);
  return { status: 204, body: undefined };
});
