/**
 * Tag `scim`: SCIM 2.0 for a tenant's directory (docs/directory-sync.md), authenticated by the
 * tenant's SCIM token (x-access scimToken); every reply is `application/scim+json`.
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
  UpdateScimGroupData,
  UpdateScimGroupResponses,
  UpdateScimUserData,
  UpdateScimUserResponses,
} from '../../generated/types.gen';
import type { ScimContext } from '../context/request';
import { scimBaseUrl } from '../domain/directory-settings';
import { directoryOrigin } from '../domain/events';
import * as discovery from '../domain/scim/discovery';
import * as groups from '../domain/scim/groups';
import * as users from '../domain/scim/users';
import { scimOperation, type HandlerInput, type Reply } from './types';

const SCIM_JSON = { 'Content-Type': 'application/scim+json; charset=utf-8' } as const;

function scope(ctx: ScimContext): users.ScimScope {
  return { trx: ctx.trx, origin: directoryOrigin(ctx.tokenId, ctx.requestId, ctx.ip), tenantId: ctx.tenantId, base: scimBaseUrl(ctx.config) };
}

/** A SCIM body as the generated type of its operation (the domain builds it to the schema). */
const as = <T>(body: Record<string, unknown>): T => body as T;

export const getScimServiceProviderConfig = scimOperation(async (ctx): Promise<Reply<GetScimServiceProviderConfigResponses>> => ({
  status: 200,
  body: as(discovery.serviceProviderConfig(scimBaseUrl(ctx.config))),
  headers: SCIM_JSON,
}));

export const listScimResourceTypes = scimOperation(async (ctx): Promise<Reply<ListScimResourceTypesResponses>> => ({ status: 200, body: as(discovery.resourceTypes(scimBaseUrl(ctx.config))), headers: SCIM_JSON }));

export const listScimSchemas = scimOperation(async (ctx): Promise<Reply<ListScimSchemasResponses>> => ({ status: 200, body: as(discovery.schemas(scimBaseUrl(ctx.config))), headers: SCIM_JSON }));

export const listScimUsers = scimOperation(async (ctx, input: HandlerInput<ListScimUsersData>): Promise<Reply<ListScimUsersResponses>> => ({
  status: 200,
  body: as(await users.listUsers(scope(ctx), input.query)),
  headers: SCIM_JSON,
}));

export const createScimUser = scimOperation(async (ctx, input: HandlerInput<CreateScimUserData>): Promise<Reply<CreateScimUserResponses>> => {
  const user = await users.createUser(scope(ctx), input.body);
  ctx.log.info({ directory_user_id: user.id }, 'Directory user created');
  return { status: 201, body: as(user), headers: { ...SCIM_JSON, Location: String((user.meta as { location: string }).location) } };
});

export const getScimUser = scimOperation(async (ctx, input: HandlerInput<GetScimUserData>): Promise<Reply<GetScimUserResponses>> => ({
  status: 200,
  body: as(await users.getUser(scope(ctx), input.path.id, input.query)),
  headers: SCIM_JSON,
}));

export const replaceScimUser = scimOperation(async (ctx, input: HandlerInput<ReplaceScimUserData>): Promise<Reply<ReplaceScimUserResponses>> => ({
  status: 200,
  body: as(await users.replaceUser(scope(ctx), input.path.id, input.body)),
  headers: SCIM_JSON,
}));

export const updateScimUser = scimOperation(async (ctx, input: HandlerInput<UpdateScimUserData>): Promise<Reply<UpdateScimUserResponses>> => ({
  status: 200,
  body: as(await users.patchUser(scope(ctx), input.path.id, input.body)),
  headers: SCIM_JSON,
}));

export const deleteScimUser = scimOperation(async (ctx, input: HandlerInput<DeleteScimUserData>): Promise<Reply<DeleteScimUserResponses>> => {
  await users.deleteUser(scope(ctx), input.path.id);
  ctx.log.info({ directory_user_id: input.path.id }, 'Directory user deleted');
  return { status: 204, body: undefined };
});

export const listScimGroups = scimOperation(async (ctx, input: HandlerInput<ListScimGroupsData>): Promise<Reply<ListScimGroupsResponses>> => ({
  status: 200,
  body: as(await groups.listGroups(scope(ctx), input.query)),
  headers: SCIM_JSON,
}));

export const createScimGroup = scimOperation(async (ctx, input: HandlerInput<CreateScimGroupData>): Promise<Reply<CreateScimGroupResponses>> => {
  const group = await groups.createGroup(scope(ctx), input.body);
  return { status: 201, body: as(group), headers: { ...SCIM_JSON, Location: String((group.meta as { location: string }).location) } };
});

export const getScimGroup = scimOperation(async (ctx, input: HandlerInput<GetScimGroupData>): Promise<Reply<GetScimGroupResponses>> => ({
  status: 200,
  body: as(await groups.getGroup(scope(ctx), input.path.id, input.query)),
  headers: SCIM_JSON,
}));

export const replaceScimGroup = scimOperation(async (ctx, input: HandlerInput<ReplaceScimGroupData>): Promise<Reply<ReplaceScimGroupResponses>> => ({
  status: 200,
  body: as(await groups.replaceGroup(scope(ctx), input.path.id, input.body)),
  headers: SCIM_JSON,
}));

export const updateScimGroup = scimOperation(async (ctx, input: HandlerInput<UpdateScimGroupData>): Promise<Reply<UpdateScimGroupResponses>> => ({
  status: 200,
  body: as(await groups.patchGroup(scope(ctx), input.path.id, input.body)),
  headers: SCIM_JSON,
}));

export const deleteScimGroup = scimOperation(async (ctx, input: HandlerInput<DeleteScimGroupData>): Promise<Reply<DeleteScimGroupResponses>> => {
  await groups.deleteGroup(scope(ctx), input.path.id);
  return { status: 204, body: undefined };
});
