/**
 * Tenant members (users rows). Functions take the request's tenant-scoped transaction.
 *
 * Nobody becomes a member without consent (docs/tenants.md#membership): `addMember` is for platform
 * admins (x-access tenantPlatformAdmin); tenant admins invite. Any member may leave. A removal or
 * a departure leaves a mark that only an invitation or `addMember` clears
 * (docs/security.md#a-removal-sticks).
 */
import type { Member } from '../context/entities';
import { directoryStateOfMembers } from '../db/queries/directory-list';
import { clearRemoval, markRemoved } from '../db/queries/member-removals';
import { deleteMember, findMemberForUpdate, insertMemberIfAbsent, lockMemberAdministrators, lockMemberForDelete, type MemberAdministrator, membersPage, setMemberRole } from '../db/queries/members';
import { withSavepoint, type Transaction } from '../db/tenant-scope';
import { ApiError } from '../errors';
import { memberData, recordEvent, type EventOrigin } from './events';
import { revokeInvitationsSentBy } from './invitations';
import { pageByCreation } from './pagination';
import { administers, administrationRefusal, checkGrantable, requireRole, rolePermissionsOf, type Grantor } from './roles';
import { ADMIN_ROLE, type RoleKey } from '../context/roles';
import { ADMINISTRATION_PERMISSIONS, type SystemPermission } from '../context/permissions';

/** What changing a membership needs (the x-permission of removeMember and updateMemberRole). */
const MEMBERS_WRITE: SystemPermission = 'tenant:members:write';
/** What inviting needs: a member whose role stops holding it loses their pending invitations. */
const INVITATIONS_WRITE: SystemPermission = 'tenant:invitations:write';

/** A member and the permissions of their role (sorted). */
export interface MemberWithPermissions {
  readonly member: Member;
  readonly permissions: readonly string[];
  /**
   * The membership's directory user (docs/directory-sync.md#what-tenant-admins-see): null when
   * the directory does not manage it; absent where not read.
   */
  readonly directory?: { readonly active: boolean } | null;
}

/** One page of the tenant's members, oldest first, each with their role's permissions. */
export async function listMembers(trx: Transaction, tenantId: string, opts: { limit: number; cursor?: string }): Promise<{ members: MemberWithPermissions[]; nextCursor: string | null }> {
  const { page, nextCursor } = await pageByCreation((limit, after) => membersPage(trx, tenantId, limit, after), opts);
  const permissions = await rolePermissionsOf(trx, tenantId);
  const directory = await directoryStateOfMembers(trx, tenantId, page.map((p) => p.member.userId));
  return { members: page.map(({ member }) => ({ member, permissions: permissions.get(member.role) ?? [], directory: directory.get(member.userId) ?? null })), nextCursor };
}

export interface NewMember {
  issuer: string;
  subject: string;
  email: string;
  displayName: string | null;
  role: RoleKey;
}

/**
 * Adds a member directly (platform admins only, by the operation's access level); one who is
 * already a member (same issuer and subject) is a 409 Conflict. The email is stored trimmed.
 */
export async function addMember(trx: Transaction, origin: EventOrigin, tenantId: string, m: NewMember): Promise<MemberWithPermissions> {
  const role = await requireRole(trx, tenantId, m.role);
  const row = await insertMemberIfAbsent(trx, tenantId, { ...m, email: m.email.trim() });
  if (!row) throw new ApiError('conflict', `Subject '${m.subject}' of issuer '${m.issuer}' is already a member of this tenant.`);
  // The operator's add brings back someone removed earlier (docs/security.md#a-removal-sticks).
  await clearRemoval(trx, tenantId, m);
  await recordEvent(trx, origin, { action: 'member.added', tenantId, target: { type: 'member', id: row.userId }, data: { member: memberData(row) } });
  return { member: row, permissions: role.permissions, directory: null };
}

/**
 * Who is changing membership: the caller's own user id in the tenant, or null for a platform
 * admin (who is not a member, or acts as the operator); and what they may grant. A member whose
 * role stopped holding `tenant:members:write` in a concurrent request loses the right to change
 * anything once the administrators' rows are locked.
 */
export interface MembershipActor {
  userId: string | null;
  /** The permissions of the actor's role; null for a platform admin (grants anything). */
  grantor?: Grantor;
}

/**
 * The membership changes' locks (src/db/queries/members.ts): the rows of the members who may
 * change memberships, each saying whether it also holds every administration permission.
 */
function lockAdministrators(sp: Transaction, tenantId: string): Promise<MemberAdministrator[]> {
  return lockMemberAdministrators(sp, tenantId, MEMBERS_WRITE, ADMINISTRATION_PERMISSIONS);
}

/** After the rows are locked: the acting member's role must still hold `tenant:members:write`. */
function assertStillAllowed(actor: MembershipActor, locked: readonly MemberAdministrator[]): void {
  if (actor.userId !== null && !locked.some((a) => a.userId === actor.userId)) {
    throw new ApiError('accessDenied', `Your role no longer holds permission '${MEMBERS_WRITE}'; another member changed it.`);
  }
}

const adminsOf = (locked: readonly MemberAdministrator[]) => locked.filter((a) => a.role === ADMIN_ROLE);

/** 409 when `userId` is the last member holding every administration permission and stops holding them. */
function assertAdministrationKept(locked: readonly MemberAdministrator[], userId: string): void {
  if (!locked.some((a) => a.userId === userId && a.holdsAll)) return;
  const refusal = administrationRefusal(locked.filter((a) => a.holdsAll && a.userId !== userId).length);
  if (refusal) throw refusal;
}

/**
 * Runs a membership change in a savepoint, taking the locks in one order (see
 * src/db/queries/members.ts). Every request holds its caller's row FOR KEY SHARE, so two admins
 * removing each other at the same moment each wait for the other's request to end: a cycle no
 * lock order can avoid, which PostgreSQL breaks by failing one statement. That one rolls back to
 * the savepoint (releasing the locks it took there) and answers 409; the other change completes.
 */
async function inSavepointRefusingDeadlock<T>(trx: Transaction, fn: (sp: Transaction) => Promise<T>): Promise<T> {
  try {
    return await withSavepoint(trx, fn);
  } catch (err) {
    if ((err as { code?: string }).code === '40P01') {
      throw new ApiError('conflict', "Another admin changed this tenant's members at the same moment; nothing was changed. Check the members and retry if still needed.");
    }
    throw err;
  }
}

/**
 * Removes a member. The member's row is locked for the delete first (waiting for their
 * in-flight requests), then the tenant's admin rows, so two concurrent removals or demotions
 * cannot both pass the last-admin check. The member's pending invitations are revoked.
 */
export async function removeMember(trx: Transaction, origin: EventOrigin, tenantId: string, userId: string, actor: MembershipActor = { userId: null }): Promise<void> {
  await inSavepointRefusingDeadlock(trx, async (sp) => {
    const locked = await lockMemberForDelete(sp, tenantId, userId);
    const administrators = await lockAdministrators(sp, tenantId);
    assertStillAllowed(actor, administrators);
    if (!locked) throw new ApiError('notFound', `No member with user id ${userId} in this tenant.`);
    const target = (await findMemberForUpdate(sp, tenantId, userId))!;
    if (target.role === ADMIN_ROLE && adminsOf(administrators).length <= 1) {
      throw new ApiError(
        'conflict',
        'The last admin of a tenant cannot be removed; make another member admin first with PATCH /api/tenant/members/{user_id} {"role":"admin"} (updateMemberRole).',
      );
    }
    assertAdministrationKept(administrators, userId);
    await revokeInvitationsSentBy(sp, origin, tenantId, userId);
    await deleteMember(sp, tenantId, userId);
    // Their identity provider may still name the tenant: the mark keeps claims from undoing this.
    await markRemoved(sp, tenantId, target, 'removed');
    await recordEvent(sp, origin, { action: 'member.removed', tenantId, target: { type: 'member', id: userId }, data: { member: memberData(target) } });
  });
}

/** What leaving did: the membership that ended and how many invitations it revoked. */
export interface Departure {
  member: Member;
  revokedInvitations: number;
}

/**
 * The caller leaves the tenant. The last admin cannot (409): another member must be made admin
 * first. Same locks and order as a removal; the caller's pending invitations are revoked.
 */
export async function leaveTenant(trx: Transaction, origin: EventOrigin, tenantId: string, tenantSlug: string, userId: string | null): Promise<Departure> {
  if (userId === null) throw new ApiError('notFound', `You are not a member of tenant '${tenantSlug}', so there is no membership to leave.`);
  return inSavepointRefusingDeadlock(trx, async (sp) => {
    const locked = await lockMemberForDelete(sp, tenantId, userId);
    const administrators = await lockAdministrators(sp, tenantId);
    // Removed by an admin while this request waited.
    if (!locked) throw new ApiError('notFound', `You are no longer a member of tenant '${tenantSlug}'.`);
    const me = (await findMemberForUpdate(sp, tenantId, userId))!;
    if (me.role === ADMIN_ROLE && adminsOf(administrators).length <= 1) {
      throw new ApiError(
        'conflict',
        `You are the last admin of tenant '${tenantSlug}' and cannot leave it; make another member admin first with PATCH /api/tenant/members/{user_id} {"role":"admin"} (updateMemberRole).`,
      );
    }
    assertAdministrationKept(administrators, userId);
    const revoked = await revokeInvitationsSentBy(sp, origin, tenantId, userId);
    await deleteMember(sp, tenantId, userId);
    await markRemoved(sp, tenantId, me, 'left');
    await recordEvent(sp, origin, { action: 'member.left', tenantId, target: { type: 'member', id: userId }, data: { member: memberData(me) } });
    return { member: me, revokedInvitations: revoked };
  });
}

/** What a role change did: the member after it and the role before. */
export interface RoleChange {
  member: Member;
  previousRole: RoleKey;
  changed: boolean;
  /** The permissions of the member's (new) role. */
  permissions: readonly string[];
  /** The member's directory user, or null (a directory's member keeps the directory's role). */
  directory: { active: boolean } | null;
}

/**
 * Sets a member's role. Demoting the last admin is a 409. The admin rows are locked first:
 * two admins demoting each other at the same time run one after the other, and the second
 * finds either that it is no longer an admin (403) or that its target is the last one (409),
 * so exactly one admin remains. A demoted admin's pending invitations are revoked.
 */
export async function updateMemberRole(
  trx: Transaction,
  origin: EventOrigin,
  tenantId: string,
  userId: string,
  role: RoleKey,
  actor: MembershipActor = { userId: null },
): Promise<RoleChange> {
  return inSavepointRefusingDeadlock(trx, async (sp) => {
    const administrators = await lockAdministrators(sp, tenantId);
    assertStillAllowed(actor, administrators);
    const target = await findMemberForUpdate(sp, tenantId, userId);
    if (!target) throw new ApiError('notFound', `No member with user id ${userId} in this tenant.`);
    const { permissions } = await requireRole(sp, tenantId, role);
    // Read after the member's row is locked: a binding of this membership waits for it.
    const directory = (await directoryStateOfMembers(sp, tenantId, [userId])).get(userId) ?? null;
    if (target.role === role) return { member: target, previousRole: target.role, changed: false, permissions, directory };
    if (directory) {
      throw new ApiError(
        'conflict',
        `Member ${userId} is managed by the tenant's directory (SCIM), whose groups give their role: change their groups in the directory, or the group_roles mapping (PUT /api/tenant/scim); a role set here would not stay.`,
      );
    }
    checkGrantable(actor.grantor ?? null, permissions, `Role '${role}'`);
    if (target.role === ADMIN_ROLE && adminsOf(administrators).length <= 1) {
      throw new ApiError('conflict', 'The last admin of a tenant cannot be demoted; make another member admin first.');
    }
    if (!administers(permissions)) assertAdministrationKept(administrators, userId);
    const member = await setMemberRole(sp, tenantId, userId, role);
    await recordEvent(sp, origin, {
      action: 'member.role_changed',
      tenantId,
      target: { type: 'member', id: userId },
      data: { member: memberData(member), before: { role: target.role }, after: { role } },
    });
    // An invitation is its inviter's act: one whose new role may not invite takes theirs back.
    if (!permissions.includes(INVITATIONS_WRITE)) await revokeInvitationsSentBy(sp, origin, tenantId, userId);
    return { member, previousRole: target.role, changed: true, permissions, directory };
  });
}
