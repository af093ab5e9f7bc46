/**
 * Tag `invitations`: inviting people to the resolved tenant by email (tenant admins), and
 * accepting an invitation (any caller; no tenant needed).
 */
import type {
  AcceptInvitationData,
  AcceptInvitationResponses,
  CreateInvitationData,
  CreateInvitationResponses,
  Invitation,
  InvitationWithToken,
  ListInvitationsData,
  ListInvitationsResponses,
  ResendInvitationData,
  ResendInvitationResponses,
  RevokeInvitationData,
  RevokeInvitationResponses,
} from '../../generated/types.gen';

import { grantorOf } from '../domain/roles';
import * as invitations from '../domain/invitations';
import { statusRefusal } from '../tenancy/decide';
import type { EnteredTenant } from '../context/request';
import { toMember, toTenant } from './mappers';
import { MEMBER_ROLE } from '../context/roles';
import { authenticated, tenantRead, tenantScoped, type HandlerInput, type Reply } from './types';
import type { InvitationRecord } from '../context/records';

const iso = (d: Date | string): string => (d instanceof Date ? d : new Date(d)).toISOString();
const isoOrNull = (d: Date | string | null): string | null => (d === null ? null : iso(d));

/** An invitations row as the Invitation schema (never its token hash). */
function toInvitation(r: InvitationRecord): Invitation {
  return {
    invitation_id: r.id,
    tenant_id: r.tenant_id,
    email: r.email,
    role: r.role,
    status: invitations.effectiveStatus(r),
    expires_at: iso(r.expires_at),
    created_at: iso(r.created_at),
    invited_by: { user_id: r.invited_by, email: r.invited_by_email },
    accepted_at: isoOrNull(r.accepted_at),
    revoked_at: isoOrNull(r.revoked_at),
    delivery: r.delivery,
  };
}

function withToken(issued: invitations.IssuedInvitation): InvitationWithToken {
  return { ...toInvitation(issued.invitation), token: issued.token, accept_url: issued.acceptUrl };
}

function invitationContext(ctx: EnteredTenant): invitations.InvitationContext {
  return {
    tenant: { id: ctx.tenant.id, name: ctx.tenant.name, slug: ctx.tenant.slug },
    inviter: {
      // A platform admin acts as the operator, even when also a member (as for role changes).
      userId: ctx.caller.isPlatformAdmin ? null : (ctx.membership?.userId ?? null),
      email: ctx.membership?.email ?? ctx.caller.email,
      name: ctx.membership?.displayName ?? ctx.caller.name,
      grantor: grantorOf(ctx),
    },
    ttlHours: ctx.config.invitationTtlHours,
    frontendBaseUrl: ctx.config.frontendBaseUrl,
    mailConfigured: ctx.services.mailer.configured,
    send: (mail) => ctx.services.mailer.sendInvitation(mail, ctx.log),
  };
}

// Create and resend are `tenantRead`: the domain commits the invitation in its own short
// transaction and sends the mail after it, so a slow mail server holds no pooled connection.
export const createInvitation = tenantRead(
  async (ctx, input: HandlerInput<CreateInvitationData>): Promise<Reply<CreateInvitationResponses>> => {
    const issued = await invitations.createInvitation(ctx.services.db, ctx.origin, invitationContext(ctx), { email: input.body.email, role: input.body.role ?? MEMBER_ROLE });
    ctx.log.info({ invitation_id: issued.invitation.id, role: issued.invitation.role, delivery: issued.invitation.delivery }, 'Invitation created');
    return { status: 201, body: withToken(issued) };
  },
);

export const listInvitations = tenantScoped(
  async (ctx, input: HandlerInput<ListInvitationsData>): Promise<Reply<ListInvitationsResponses>> => {
    const page = await invitations.listInvitations(ctx.trx, ctx.tenant.id, {
      status: input.query.status,
      limit: input.query.limit ?? 100,
      cursor: input.query.cursor,
    });
    return { status: 200, body: { invitations: page.invitations.map(toInvitation), total_count: page.totalCount, next_cursor: page.nextCursor } };
  },
);

export const resendInvitation = tenantRead(
  async (ctx, input: HandlerInput<ResendInvitationData>): Promise<Reply<ResendInvitationResponses>> => {
    const issued = await invitations.resendInvitation(ctx.services.db, ctx.origin, invitationContext(ctx), input.path.invitation_id);
    ctx.log.info({ invitation_id: issued.invitation.id, delivery: issued.invitation.delivery }, 'Invitation resent');
    return { status: 200, body: withToken(issued) };
  },
);

export const revokeInvitation = tenantScoped(
  async (ctx, input: HandlerInput<RevokeInvitationData>): Promise<Reply<RevokeInvitationResponses>> => {
    const row = await invitations.revokeInvitation(ctx.trx, ctx.origin, ctx.tenant.id, input.path.invitation_id);
    ctx.log.info({ invitation_id: row.id }, 'Invitation revoked');
    return { status: 200, body: toInvitation(row) };
  },
);

export const acceptInvitation = authenticated(
  async (ctx, input: HandlerInput<AcceptInvitationData>): Promise<Reply<AcceptInvitationResponses>> => {
    const { issuer, subject, email, emailVerified, name } = ctx.caller;
    const accepted = await invitations.acceptInvitation(ctx.services.db, ctx.origin, { issuer, subject, email, emailVerified, name }, input.body.token, statusRefusal);
    ctx.log.info(
      { invitation_id: accepted.invitation.id, tenant_id: accepted.tenant.id, tenant_slug: accepted.tenant.slug, user_id: accepted.member.userId },
      'Invitation accepted',
    );
    return { status: 200, body: { tenant: toTenant(accepted.tenant), membership: toMember(accepted.member, accepted.permissions) } };
  },
);
