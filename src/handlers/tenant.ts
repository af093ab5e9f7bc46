/**
 * Tag `tenant`: the resolved tenant and its members.
 */
import type {
  AddMemberData,
  AddMemberResponses,
  GetCurrentTenantResponses,
  IssueTenantTokenResponses,
  LeaveTenantResponses,
  Member,
  ListMembersData,
  ListMembersResponses,
  RemoveMemberData,
  RemoveMemberResponses,
  UpdateMemberRoleData,
  UpdateMemberRoleResponses,
} from '../../generated/types.gen';
import * as members from '../domain/members';
import type { MembershipActor } from '../domain/members';
import { grantorOf } from '../domain/roles';
import type { TenantContext } from '../context/request';
import { toMember, toTenant } from './mappers';
import { issueMemberToken } from '../domain/tenant-tokens';
import { tenantRead, tenantScoped, type HandlerInput, type Reply } from './types';

// One statement (app_tenant_facts) answers an existing member: no transaction stays open.
export const getCurrentTenant = tenantRead(
  async (ctx): Promise<Reply<GetCurrentTenantResponses>> => ({
    status: 200,
    body: { tenant: toTenant(ctx.tenant), ...(ctx.membership ? { membership: toMember(ctx.membership, ctx.membership.permissions) } : {}), source: ctx.source },
  }),
);

// Resolved like GET /api/tenant (one statement); signing needs no transaction either.
export const issueTenantToken = tenantRead(async (ctx): Promise<Reply<IssueTenantTokenResponses>> => {
  const t = await issueMemberToken(ctx);
  return {
    status: 200,
    body: { access_token: t.accessToken, token_type: 'Bearer', expires_in: t.expiresIn, tenant_id: t.tenantId, tenant_slug: t.tenantSlug, role: t.role, permissions: [...t.permissions] },
    headers: { 'Cache-Control': 'no-store' },
  };
});

/** A member with whether the tenant's directory manages them and whether it has them active (docs/directory-sync.md). */
function toMemberWithDirectory(m: members.MemberWithPermissions): Member {
  return { ...toMember(m.member, m.permissions), directory_managed: m.directory != null, directory_active: m.directory?.active ?? null };
}

export const listMembers = tenantScoped(async (ctx, input: HandlerInput<ListMembersData>): Promise<Reply<ListMembersResponses>> => {
  const page = await members.listMembers(ctx.trx, ctx.tenant.id, { limit: input.query.limit ?? 100, cursor: input.query.cursor });
  return { status: 200, body: { members: page.members.map(toMemberWithDirectory), next_cursor: page.nextCursor } };
});

// x-access tenantPlatformAdmin: the operator adds a person directly; tenant admins invite.
export const addMember = tenantScoped(async (ctx, input: HandlerInput<AddMemberData>): Promise<Reply<AddMemberResponses>> => {
  const added = await members.addMember(ctx.trx, ctx.origin, ctx.tenant.id, {
    issuer: input.body.issuer ?? ctx.caller.issuer,
    subject: input.body.subject,
    email: input.body.email,
    displayName: input.body.display_name ?? null,
    role: input.body.role,
  });
  ctx.log.info({ user_id: added.member.userId, role: added.member.role }, 'Member added');
  return { status: 201, body: toMemberWithDirectory(added) };
});

/**
 * Who changes membership. A platform admin acts as one (the access stage let them in by role),
 * even when also a plain member of the tenant; a tenant admin acts as that member, whose admin
 * role the domain re-checks under lock (a concurrent demotion).
 */
function actorOf(ctx: TenantContext): MembershipActor {
  return { userId: ctx.caller.isPlatformAdmin ? null : (ctx.membership?.userId ?? null), grantor: grantorOf(ctx) };
}

export const removeMember = tenantScoped(async (ctx, input: HandlerInput<RemoveMemberData>): Promise<Reply<RemoveMemberResponses>> => {
  await members.removeMember(ctx.trx, ctx.origin, ctx.tenant.id, input.path.user_id, actorOf(ctx));
  ctx.log.info({ user_id: input.path.user_id }, 'Member removed');
  return { status: 204, body: undefined };
});

export const updateMemberRole = tenantScoped(async (ctx, input: HandlerInput<UpdateMemberRoleData>): Promise<Reply<UpdateMemberRoleResponses>> => {
  const change = await members.updateMemberRole(ctx.trx, ctx.origin, ctx.tenant.id, input.path.user_id, input.body.role, actorOf(ctx));
  if (change.changed) ctx.log.info({ user_id: change.member.userId, role: change.member.role, previous_role: change.previousRole }, 'Member role changed');
  return { status: 200, body: toMemberWithDirectory({ member: change.member, permissions: change.permissions, directory: change.directory }) };
});

export const leaveTenant = tenantScoped(async (ctx): Promise<Reply<LeaveTenantResponses>> => {
  const left = await members.leaveTenant(ctx.trx, ctx.origin, ctx.tenant.id, ctx.tenant.slug, ctx.membership?.userId ?? null);
  ctx.log.info({ user_id: left.member.userId, revoked_invitations: left.revokedInvitations }, 'Member left the tenant');
  return {
    status: 200,
    body: { tenant_id: ctx.tenant.id, tenant_slug: ctx.tenant.slug, membership: toMember(left.member, ctx.membership?.permissions ?? []), revoked_invitations: left.revokedInvitations },
  };
});
