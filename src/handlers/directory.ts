/**
 * Tag `directory`: a tenant's directory sync settings and SCIM tokens (tenant admins, and
 * platform admins through X-Tenant). Rules: docs/directory-sync.md.
 */
import type {
  CreateScimTokenData,
  CreateScimTokenResponses,
  GetScimSettingsResponses,
  ListDirectoryUsersData,
  ListDirectoryUsersResponses,
  ListScimTokensResponses,
  RevokeScimTokenData,
  RevokeScimTokenResponses,
  ScimSettings,
  UpdateScimSettingsData,
  UpdateScimSettingsResponses,
} from '../../generated/types.gen';
import * as directory from '../domain/directory-settings';
import { listDirectoryUsers as listUsers } from '../domain/directory-users';
import { tenantScoped, type HandlerInput, type Reply } from './types';

const iso = (d: Date | null): string | null => (d ? d.toISOString() : null);

function toSettings(s: directory.ScimSettingsView): ScimSettings {
  return { base_url: s.baseUrl, enabled: s.enabled, group_roles: s.groupRoles.map((m) => ({ group: m.group, role: m.role })), external_id_claim: s.externalIdClaim };
}

export const createScimToken = tenantScoped(async (ctx, input: HandlerInput<CreateScimTokenData>): Promise<Reply<CreateScimTokenResponses>> => {
  const t = await directory.createScimToken(ctx.trx, ctx.origin, ctx.tenant.id, input.body.description ?? null);
  ctx.log.info({ token_id: t.id }, 'SCIM token created');
  return { status: 201, body: { token_id: t.id, token: t.token, description: t.description, created_at: t.created_at.toISOString() }, headers: { 'Cache-Control': 'no-store' } };
});

export const listScimTokens = tenantScoped(async (ctx): Promise<Reply<ListScimTokensResponses>> => ({
  status: 200,
  body: { tokens: (await directory.listScimTokens(ctx.trx, ctx.tenant.id)).map((t) => ({ token_id: t.id, description: t.description, created_at: t.created_at.toISOString(), last_used_at: iso(t.last_used_at) })) },
}));

export const revokeScimToken = tenantScoped(async (ctx, input: HandlerInput<RevokeScimTokenData>): Promise<Reply<RevokeScimTokenResponses>> => {
  await directory.revokeScimToken(ctx.trx, ctx.origin, ctx.tenant.id, input.path.token_id);
  ctx.log.info({ token_id: input.path.token_id }, 'SCIM token revoked');
  return { status: 204, body: undefined };
});

export const getScimSettings = tenantScoped(async (ctx): Promise<Reply<GetScimSettingsResponses>> => ({
  status: 200,
  body: toSettings(await directory.getScimSettings(ctx.trx, ctx.config, ctx.tenant.id)),
}));

export const updateScimSettings = tenantScoped(async (ctx, input: HandlerInput<UpdateScimSettingsData>): Promise<Reply<UpdateScimSettingsResponses>> => {
  const s = await directory.updateScimSettings(ctx.trx, ctx.config, ctx.origin, ctx.tenant.id, { groupRoles: input.body.group_roles, externalIdClaim: input.body.external_id_claim });
  return { status: 200, body: toSettings(s) };
});

// Every directory user, deactivated and not yet signed in included (docs/directory-sync.md#what-tenant-admins-see).
export const listDirectoryUsers = tenantScoped(async (ctx, input: HandlerInput<ListDirectoryUsersData>): Promise<Reply<ListDirectoryUsersResponses>> => {
  const page = await listUsers(ctx.trx, ctx.tenant.id, { limit: input.query.limit ?? 100, cursor: input.query.cursor });
  return {
    status: 200,
    body: {
      users: page.users.map((u) => ({
        directory_user_id: u.id,
        user_name: u.userName,
        external_id: u.externalId,
        display_name: u.displayName,
        emails: u.emails,
        active: u.active,
        role: u.role,
        groups: u.groups.map((g) => ({ group_id: g.id, display_name: g.displayName })),
        member_id: u.memberId,
        created_at: u.createdAt.toISOString(),
        updated_at: u.updatedAt.toISOString(),
      })),
      next_cursor: page.nextCursor,
    },
  };
});
