/**
 * Tag `tenant`: the resolved tenant and its members.
 */
import type {
  AddMemberData,
  AddMemberResponses,
  GetCurrentTenantResponses,
  ListMembersData,
  ListMembersResponses,
  RemoveMemberData,
  RemoveMemberResponses,
} from '../../generated/types.gen';
import * as members from '../domain/members';
import type { TenantContext } from '../http/context';
import { ApiError } from '../http/errors';
import { toMember, toTenant } from './mappers';
import { tenantScoped, type HandlerInput, type Reply } from './types';

/** Tenant admins, and platform admins, manage members. */
function requireTenantAdmin(ctx: TenantContext, action: string): void {
  if (ctx.membership?.role === 'admin' || ctx.caller.isPlatformAdmin) return;
  throw new ApiError('forbidden', `Only admins of tenant '${ctx.tenant.slug}' may ${action}.`);
}

export const getCurrentTenant = tenantScoped(
  async (ctx): Promise<Reply<GetCurrentTenantResponses>> => ({
    status: 200,
    body: { tenant: toTenant(ctx.tenant), ...(ctx.membership ? { membership: toMember(ctx.membership) } : {}), source: ctx.source },
  }),
);

export const listMembers = tenantScoped(async (ctx, input: HandlerInput<ListMembersData>): Promise<Reply<ListMembersResponses>> => {
  const page = await members.listMembers(ctx.trx, ctx.tenant.id, { limit: input.query.limit ?? 100, cursor: input.query.cursor });
  return { status: 200, body: { members: page.members.map(toMember), next_cursor: page.nextCursor } };
});

export const addMember = tenantScoped(async (ctx, input: HandlerInput<AddMemberData>): Promise<Reply<AddMemberResponses>> => {
  requireTenantAdmin(ctx, 'add members');
  const user = await members.addMember(ctx.trx, ctx.tenant.id, {
    issuer: input.body.issuer ?? ctx.caller.issuer,
    subject: input.body.subject,
    email: input.body.email,
    displayName: input.body.display_name ?? null,
    role: input.body.role,
  });
  ctx.log.info({ user_id: user.id, role: user.role }, 'Member added');
  return { status: 201, body: toMember(user) };
});

export const removeMember = tenantScoped(async (ctx, input: HandlerInput<RemoveMemberData>): Promise<Reply<RemoveMemberResponses>> => {
  requireTenantAdmin(ctx, 'remove members');
  await members.removeMember(ctx.trx, ctx.tenant.id, input.path.user_id);
  ctx.log.info({ user_id: input.path.user_id }, 'Member removed');
  return { status: 204, body: undefined };
});
