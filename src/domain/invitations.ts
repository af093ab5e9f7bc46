/**
 * Invitations (docs/tenants.md#invitations-and-membership-in-detail): how people join a tenant by
 * email. List and revoke run in the tenant admin's request transaction; create and resend run their
 * own short transactions, so the mail goes out after the commit and holds no connection or lock;
 * accept runs for a caller who has no tenant yet. Tokens are 256-bit random secrets, stored only as
 * their sha256. Never sees req/res.
 *
 * An invitation is its inviter's act: when the inviter's role stops holding
 * `tenant:invitations:write` (a role change, a removal, leaving) their pending invitations are
 * revoked in the same transaction (`revokeInvitationsSentBy`); one whose inviter's role lost it
 * by a role edit is revoked when someone tries to accept it.
 *
 * Events: each change records its event in its own transaction with `recordEvent`; the accept
 * link (never the token) goes into invitation.created/resent.
 */
import crypto from 'node:crypto';
import type { Member, Tenant, TenantStatus } from '../context/entities';

import { lockInviter, memberWithEmailExists } from '../db/queries/members';
import {
  countInvitations,
  expireStalePending,
  findInvitationByTokenForUpdate,
  findInvitationForUpdate,
  fetchInvitationPage,
  findMemberByIdentity,
  insertInvitation,
  insertMemberIfAbsent,
  lockTenantForKeyShare,
  markAccepted,
  markRevoked,
  renewInvitation,
  revokePendingSentBy,
  roleOfMember,
  setDelivery,
  tenantOfInvitationToken,
  type InvitationStatusFilter,
} from '../db/queries/invitations';
import { clearRemoval } from '../db/queries/member-removals';
import { withTenant, type Database, type Transaction } from '../db/tenant-scope';
import { ApiError } from '../errors';
import type { Delivery, InvitationMail } from '../mail/invitation-mail';
import { emailKey, sameEmail } from './email';
import { memberData, recordEvent, type EventOrigin } from './events';
import { pageByCreation } from './pagination';
import type { RoleKey } from '../context/roles';
import type { SystemPermission } from '../context/permissions';
import { checkGrantable, requireRole, rolePermissionsOf, type Grantor } from './roles';
import type { InvitationRecord } from '../context/records';

/** What inviting needs (the x-permission of the invitation operations). */
const INVITATIONS_WRITE: SystemPermission = 'tenant:invitations:write';

/** True while the member's role holds `tenant:invitations:write` (false when they are gone). */
async function mayInvite(trx: Transaction, tenantId: string, role: RoleKey | undefined): Promise<boolean> {
  return role !== undefined && ((await rolePermissionsOf(trx, tenantId)).get(role) ?? []).includes(INVITATIONS_WRITE);
}

export type InvitationStatus = 'pending' | 'accepted' | 'revoked' | 'expired';

/** The status a reader sees: a pending invitation past its expiry is `expired`. */
export function effectiveStatus(row: Pick<InvitationRecord, 'status' | 'expires_at'>, now: Date = new Date()): InvitationStatus {
  if (row.status === 'pending' && new Date(row.expires_at).getTime() <= now.getTime()) return 'expired';
  return row.status;
}

/** A new one-time token and the hash that is stored. */
export function newInvitationToken(): { token: string; hash: string } {
  const token = `inv_${crypto.randomBytes(32).toString('base64url')}`;
  return { token, hash: hashInvitationToken(token) };
}

export function hashInvitationToken(token: string): string {
  return crypto.createHash('sha256').update(token, 'utf8').digest('hex');
}

/** SERVICE_FRONTEND_BASE_URL + `/invitations/accept?token=…` (keeping the base's path), or null. */
export function acceptUrl(frontendBaseUrl: string | null, token: string): string | null {
  if (frontendBaseUrl === null) return null;
  const url = new URL(frontendBaseUrl);
  url.pathname = `${url.pathname.replace(/\/+$/, '')}/invitations/accept`;
  url.search = '';
  url.searchParams.set('token', token);
  return url.toString();
}

/** Where the invitation goes out from: the tenant and the admin who sends it. */
export interface InvitationContext {
  tenant: { id: string; name: string; slug: string };
  /**
   * The sending admin's user id and email. The id is null for a platform admin, who acts as
   * the operator (even when also a member): their invitations do not depend on a tenant role.
   */
  inviter: { userId: string | null; email: string | null; name: string | null; grantor?: Grantor };
  ttlHours: number;
  frontendBaseUrl: string | null;
  /** False when no mail is sent (`delivery: not_configured`). */
  mailConfigured: boolean;
  /** Sends the mail; never throws (see src/mail). */
  send: (mail: InvitationMail) => Promise<Delivery>;
}

export interface IssuedInvitation {
  invitation: InvitationRecord;
  token: string;
  acceptUrl: string | null;
}

/**
 * After the invitation has committed: sends the mail (no transaction open meanwhile), then
 * records its outcome in a short second transaction, unless the invitation was resent with
 * another token (or deleted with its tenant) in between.
 */
async function deliver(db: Database, ctx: InvitationContext, row: InvitationRecord, token: string, hash: string): Promise<IssuedInvitation> {
  const link = acceptUrl(ctx.frontendBaseUrl, token);
  const delivery = await ctx.send({
    to: row.email,
    tenantName: ctx.tenant.name,
    tenantSlug: ctx.tenant.slug,
    inviter: ctx.inviter.name ?? ctx.inviter.email,
    role: row.role,
    acceptUrl: link,
    token,
    expiresAt: new Date(row.expires_at),
  });
  const stored = delivery === row.delivery ? row : await withTenant(db, ctx.tenant.id, (trx) => setDelivery(trx, ctx.tenant.id, row.id, hash, delivery));
  if (stored) return { invitation: stored, token, acceptUrl: link };
  row.delivery = delivery; // resent or deleted meanwhile: this answer still says how its mail went
  return { invitation: row, token, acceptUrl: link };
}

/**
 * What `delivery` reads until the send has succeeded: `failed` (not delivered yet) with a
 * mailer, so an invitation whose send never finished (a crash) reads as one to resend.
 */
const undelivered = (ctx: InvitationContext): Delivery => (ctx.mailConfigured ? 'failed' : 'not_configured');

/**
 * First statements of create and resend: the tenant still exists (FOR KEY SHARE, as a request
 * holds it), and the inviting member's role still holds `tenant:invitations:write`, the member
 * locked FOR SHARE until commit so a
 * concurrent demotion or removal either waits and then revokes this invitation, or goes first
 * and this request is refused.
 */
async function lockInvitingAdmin(trx: Transaction, ctx: InvitationContext): Promise<void> {
  if (!(await lockTenantForKeyShare(trx, ctx.tenant.id))) throw new ApiError('tenantNotFound', `Tenant '${ctx.tenant.slug}' not found.`);
  if (ctx.inviter.userId === null) return;
  const inviter = await lockInviter(trx, ctx.tenant.id, ctx.inviter.userId);
  if (!(await mayInvite(trx, ctx.tenant.id, inviter?.role))) {
    throw new ApiError('accessDenied', `Your role in tenant '${ctx.tenant.slug}' no longer holds permission '${INVITATIONS_WRITE}'; another member changed your membership.`);
  }
}

/**
 * Invites `email` with `role`. 409 when a member already has that email or a pending
 * invitation for it exists (a stale pending one past its expiry is marked expired first);
 * emails compare trimmed, NFKC, case-folded, and are stored trimmed. The invitation commits
 * first; then the mail is sent and its outcome stored as `delivery` (never failing the request).
 */
export async function createInvitation(
  db: Database,
  origin: EventOrigin,
  ctx: InvitationContext,
  input: { email: string; role: RoleKey },
): Promise<IssuedInvitation> {
  const email = input.email.trim();
  const { token, hash } = newInvitationToken();
  const row = await withTenant(db, ctx.tenant.id, async (trx) => {
    await lockInvitingAdmin(trx, ctx);
    const role = await requireRole(trx, ctx.tenant.id, input.role);
    // Inviting with a role grants it: never beyond what the inviter holds.
    checkGrantable(ctx.inviter.userId === null ? null : (ctx.inviter.grantor ?? []), role.permissions, `Inviting with role '${input.role}'`);
    if (await memberWithEmailExists(trx, ctx.tenant.id, emailKey(email))) {
      throw new ApiError('conflict', `A member of this tenant already has the email '${email}'.`);
    }
    await expireStalePending(trx, ctx.tenant.id, email);
    // A concurrent invitation of the same email hits invitations_one_pending_per_email → 409.
    const inserted = await insertInvitation(trx, ctx.tenant.id, {
      email,
      role: input.role,
      tokenHash: hash,
      ttlHours: ctx.ttlHours,
      invitedBy: ctx.inviter.userId,
      invitedByEmail: ctx.inviter.email,
      delivery: undelivered(ctx),
    });
    await recordEvent(trx, origin, {
      action: 'invitation.created',
      tenantId: ctx.tenant.id,
      target: { type: 'invitation', id: inserted.id },
      // The accept link (not the bare token) so a product's own mailer can send it.
      data: { invitation: invitationData(inserted), accept_url: acceptUrl(ctx.frontendBaseUrl, token) },
    });
    return inserted;
  });
  return deliver(db, ctx, row, token, hash);
}

const notFound = (id: string) => new ApiError('invitationNotFound', `No invitation with id ${id} in this tenant.`);

/**
 * A new token and expiry for a pending or expired invitation; the old token stops working.
 * Commits, then mails, like create.
 */
export async function resendInvitation(db: Database, origin: EventOrigin, ctx: InvitationContext, id: string): Promise<IssuedInvitation> {
  const { token, hash } = newInvitationToken();
  const row = await withTenant(db, ctx.tenant.id, async (trx) => {
    await lockInvitingAdmin(trx, ctx);
    const current = await findInvitationForUpdate(trx, ctx.tenant.id, id);
    if (!current) throw notFound(id);
    const status = effectiveStatus(current);
    // An expired invitation does not hold its role: the role may have been deleted since.
    await requireRole(trx, ctx.tenant.id, current.role);
    if (status === 'accepted' || status === 'revoked') {
      throw new ApiError('conflict', `The invitation is ${status}; only a pending or expired invitation can be resent.`);
    }
    // Whatever the status: the email may have become a member's since (added by subject).
    if (await memberWithEmailExists(trx, ctx.tenant.id, emailKey(current.email))) {
      throw new ApiError('conflict', `A member of this tenant already has the email '${current.email}'.`);
    }
    // A newer invitation of the same email that has expired in the meantime is no clash.
    await expireStalePending(trx, ctx.tenant.id, current.email);
    // Another pending invitation for the same email (made after this one expired) → 409.
    const renewed = await renewInvitation(trx, ctx.tenant.id, id, hash, ctx.ttlHours, undelivered(ctx));
    await recordEvent(trx, origin, {
      action: 'invitation.resent',
      tenantId: ctx.tenant.id,
      target: { type: 'invitation', id: renewed.id },
      data: { invitation: invitationData(renewed), accept_url: acceptUrl(ctx.frontendBaseUrl, token) },
    });
    return renewed;
  });
  return deliver(db, ctx, row, token, hash);
}

/**
 * Revokes the invitations `userId` sent that are still pending, each with its event: the
 * inviter stopped being an admin. Called by member changes after their locks; returns the count.
 */
export async function revokeInvitationsSentBy(trx: Transaction, origin: EventOrigin, tenantId: string, userId: string): Promise<number> {
  const rows = await revokePendingSentBy(trx, tenantId, userId);
  for (const row of rows) {
    await recordEvent(trx, origin, {
      action: 'invitation.revoked',
      tenantId,
      target: { type: 'invitation', id: row.id },
      data: { invitation: invitationData(row), reason: 'inviter_no_longer_admin' },
    });
  }
  return rows.length;
}

/** Revokes a pending or expired invitation; a revoked one is returned unchanged. */
export async function revokeInvitation(trx: Transaction, origin: EventOrigin, tenantId: string, id: string): Promise<InvitationRecord> {
  const current = await findInvitationForUpdate(trx, tenantId, id);
  if (!current) throw notFound(id);
  if (current.status === 'revoked') return current;
  if (current.status === 'accepted') {
    throw new ApiError('conflict', 'The invitation was already accepted; remove the member instead (DELETE /api/tenant/members/{user_id}).');
  }
  const row = await markRevoked(trx, tenantId, id);
  await recordEvent(trx, origin, { action: 'invitation.revoked', tenantId, target: { type: 'invitation', id }, data: { invitation: invitationData(row) } });
  return row;
}

export interface InvitationPage {
  invitations: InvitationRecord[];
  totalCount: number;
  nextCursor: string | null;
}

/** One page of the tenant's invitations, newest first, with the count of every match. */
export async function listInvitations(
  trx: Transaction,
  tenantId: string,
  opts: { status?: InvitationStatusFilter; limit: number; cursor?: string },
): Promise<InvitationPage> {
  const { page, nextCursor } = await pageByCreation((limit, after) => fetchInvitationPage(trx, tenantId, opts.status, limit, after), {
    limit: opts.limit,
    cursor: opts.cursor,
  });
  return { invitations: page, totalCount: await countInvitations(trx, tenantId, opts.status), nextCursor };
}

/** Who accepts: the verified caller. */
export interface Invitee {
  issuer: string;
  subject: string;
  email: string | null;
  /** true only for true/"true"; null when the claim is absent. */
  emailVerified: boolean | null;
  name: string | null;
}

export interface Acceptance {
  tenant: Tenant;
  member: Member;
  invitation: InvitationRecord;
  /** The permissions of the member's role, sorted. */
  permissions: readonly string[];
}

const unknownToken = () => new ApiError('invitationNotFound', 'The invitation does not exist, was already used, or was revoked.');

/**
 * Accepts an invitation with its token: the caller becomes a member with the invited role.
 * 404 unknown, used or revoked; 403 when the caller's email claim is not the invited email or
 * is unverified; 410 expired; 409 already a member. Runs in the invitation's tenant, with the
 * tenant row locked FOR KEY SHARE and the invitation FOR UPDATE (a token is used once).
 */
export async function acceptInvitation(
  db: Database,
  origin: EventOrigin,
  invitee: Invitee,
  token: string,
  /** The decision's refusal of a tenant that is not active (src/tenancy/decide.ts `statusRefusal`). */
  statusRefusal: (slug: string, status: TenantStatus) => ApiError | null,
): Promise<Acceptance> {
  const hash = hashInvitationToken(token);
  const tenantId = await tenantOfInvitationToken(db, hash);
  if (tenantId === null) throw unknownToken();
  const outcome = await withTenant(db, tenantId, async (trx): Promise<Acceptance | 'inviterGone'> => {
    const tenant = await lockTenantForKeyShare(trx, tenantId);
    if (!tenant) throw unknownToken();
    const inv = await findInvitationByTokenForUpdate(trx, tenantId, hash);
    if (!inv) throw unknownToken(); // resent (new token) or deleted meanwhile
    const status = effectiveStatus(inv);
    if (status === 'accepted' || status === 'revoked') throw unknownToken();
    // The invitation names its tenant (no header does): a suspended one is refused here as well.
    const closed = statusRefusal(tenant.slug, tenant.status);
    if (closed) throw closed;
    // Revoked when the inviter's role no longer holds tenant:invitations:write (a role edited
    // since, or an invitation older than that rule): revoked now (committed), the same 404.
    if (inv.invited_by !== null && !(await mayInvite(trx, tenantId, await roleOfMember(trx, tenantId, inv.invited_by)))) {
      await revokeInvitationsSentBy(trx, origin, tenantId, inv.invited_by);
      return 'inviterGone';
    }
    if (invitee.email === null || !sameEmail(invitee.email, inv.email)) {
      throw new ApiError('accessDenied', "This invitation was sent to another email address than your token's email claim.");
    }
    if (invitee.emailVerified === false) {
      throw new ApiError('accessDenied', "Your token's email address is not verified (email_verified is not true); verify it with your identity provider first.");
    }
    if (status === 'expired') {
      throw new ApiError('invitationExpired', `The invitation expired on ${new Date(inv.expires_at).toISOString()}; ask an admin of the tenant to resend it.`);
    }
    if (await findMemberByIdentity(trx, tenantId, invitee.issuer, invitee.subject)) {
      throw new ApiError('conflict', `You are already a member of tenant '${tenant.slug}'.`);
    }
    const { permissions } = await requireRole(trx, tenantId, inv.role);
    const member = await insertMemberIfAbsent(trx, tenantId, {
      issuer: invitee.issuer,
      subject: invitee.subject,
      email: invitee.email.trim(),
      displayName: invitee.name,
      role: inv.role,
    });
    if (!member) throw new ApiError('conflict', `You are already a member of tenant '${tenant.slug}'.`);
    // An invitation is consent on both sides: it brings back someone removed earlier.
    await clearRemoval(trx, tenantId, invitee);
    const invitation = await markAccepted(trx, tenantId, inv.id, member.userId);
    await recordEvent(trx, origin, { action: 'invitation.accepted', tenantId, target: { type: 'invitation', id: inv.id }, data: { invitation: invitationData(invitation), member: memberData(member) } });
    await recordEvent(trx, origin, { action: 'member.added', tenantId, target: { type: 'member', id: member.userId }, data: { member: memberData(member), invitation_id: inv.id } });
    return { tenant, member, invitation, permissions };
  });
  if (outcome === 'inviterGone') throw unknownToken();
  return outcome;
}

/** The fields of an invitation an event carries (never its token or token hash). */
function invitationData(r: InvitationRecord): Record<string, unknown> {
  return {
    invitation_id: r.id,
    email: r.email,
    role: r.role,
    status: r.status,
    expires_at: new Date(r.expires_at).toISOString(),
    invited_by: r.invited_by,
  };
}
