/**
 * Tenant members (users rows). Functions take the request's tenant-scoped transaction.
 */
import { UserRow } from '../db/models';
import { fetchKeysetRows } from '../db/queries/keyset-page';
import { deleteMember, findMemberForUpdate, insertMemberIfAbsent, lockAdmins, setMemberRole } from '../db/queries/members';
import { withSavepoint, type Transaction } from '../db/tenant-scope';
import { ApiError } from '../errors';
import { recordEvent, type EventOrigin } from './events';
import { pageByCreation } from './pagination';

/** One page of the tenant's members, oldest first. */
export async function listMembers(trx: Transaction, tenantId: string, opts: { limit: number; cursor?: string }): Promise<{ members: UserRow[]; nextCursor: string | null }> {
  const { page, nextCursor } = await pageByCreation((limit, after) => fetchKeysetRows(UserRow.query(trx).where({ tenant_id: tenantId }), limit, after), opts);
  return { members: page, nextCursor };
}

export interface NewMember {
  issuer: string;
  subject: string;
  email: string;
  displayName: string | null;
  role: 'admin' | 'member';
}

/** Adds a member; one who is already a member (same issuer and subject) is a 409 Conflict. */
export async function addMember(trx: Transaction, origin: EventOrigin, tenantId: string, m: NewMember): Promise<UserRow> {
  const row = await insertMemberIfAbsent(trx, tenantId, m);
  if (!row) throw new ApiError('conflict', `Subject '${m.subject}' of issuer '${m.issuer}' is already a member of this tenant.`);
  await recordEvent(trx, origin, { action: 'member.added', tenantId, target: { type: 'member', id: row.id }, data: { member: memberData(row) } });
  return row;
}

/**
 * Who is changing membership: the caller's own user id in the tenant, or null for a platform
 * admin who is not a member. A tenant admin demoted by a concurrent request loses the right
 * to change anything once the admin rows are locked.
 */
export interface MembershipActor {
  userId: string | null;
}

/** After the admin rows are locked: the acting member must still be one of them. */
function assertStillAdmin(actor: MembershipActor, admins: readonly string[]): void {
  if (actor.userId !== null && !admins.includes(actor.userId)) {
    throw new ApiError('forbidden', 'You are no longer an admin of this tenant; another admin changed your role.');
  }
}

/**
 * Removes a member. The tenant's admin rows are locked first, so two concurrent removals or
 * demotions cannot both pass the last-admin check. The delete itself waits for the member's
 * in-flight requests (which hold their row FOR KEY SHARE) to finish.
 */
export async function removeMember(trx: Transaction, origin: EventOrigin, tenantId: string, userId: string, actor: MembershipActor = { userId: null }): Promise<void> {
  await inSavepointRefusingDeadlock(trx, (sp) => removeMemberLocked(sp, origin, tenantId, userId, actor));
}

/**
 * Runs an admin change in a savepoint. Every request holds its caller's row FOR KEY SHARE, so
 * two admins removing each other at the same moment each wait for the other's request: a
 * deadlock PostgreSQL breaks by failing one statement. That one rolls back to the savepoint
 * (releasing the locks it took there) and answers 409; the other change then completes.
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

async function removeMemberLocked(trx: Transaction, origin: EventOrigin, tenantId: string, userId: string, actor: MembershipActor): Promise<void> {
  const admins = await lockAdmins(trx, tenantId);
  assertStillAdmin(actor, admins);
  const target = await findMemberForUpdate(trx, tenantId, userId);
  if (!target) throw new ApiError('notFound', `No member with user id ${userId} in this tenant.`);
  if (target.role === 'admin' && admins.length <= 1) {
    throw new ApiError(
      'conflict',
      'The last admin of a tenant cannot be removed; make another member admin first with PATCH /api/tenant/members/{user_id} {"role":"admin"} (updateMemberRole).',
    );
  }
  await deleteMember(trx, tenantId, userId);
  await recordEvent(trx, origin, { action: 'member.removed', tenantId, target: { type: 'member', id: userId }, data: { member: memberData(target) } });
}

/** The fields of a member an event carries. */
export function memberData(u: Pick<UserRow, 'id' | 'issuer' | 'subject' | 'email' | 'display_name' | 'role'>): Record<string, unknown> {
  return { user_id: u.id, issuer: u.issuer, subject: u.subject, email: u.email, display_name: u.display_name, role: u.role };
}

/** What a role change did: the member after it and the role before. */
export interface RoleChange {
  member: UserRow;
  previousRole: 'admin' | 'member';
  changed: boolean;
}

/**
 * Sets a member's role. Demoting the last admin is a 409. The admin rows are locked first:
 * two admins demoting each other at the same time run one after the other, and the second
 * finds either that it is no longer an admin (403) or that its target is the last one (409),
 * so exactly one admin remains.
 */
export async function updateMemberRole(
  trx: Transaction,
  origin: EventOrigin,
  tenantId: string,
  userId: string,
  role: 'admin' | 'member',
  actor: MembershipActor = { userId: null },
): Promise<RoleChange> {
  const admins = await lockAdmins(trx, tenantId);
  assertStillAdmin(actor, admins);
  const target = await findMemberForUpdate(trx, tenantId, userId);
  if (!target) throw new ApiError('notFound', `No member with user id ${userId} in this tenant.`);
  if (target.role === role) return { member: target, previousRole: target.role, changed: false };
  if (target.role === 'admin' && admins.length <= 1) {
    throw new ApiError('conflict', 'The last admin of a tenant cannot be demoted; make another member admin first.');
  }
  const member = await setMemberRole(trx, tenantId, userId, role);
  await recordEvent(trx, origin, {
    action: 'member.role_changed',
    tenantId,
    target: { type: 'member', id: userId },
    data: { member: memberData(member), before: { role: target.role }, after: { role } },
  });
  return { member, previousRole: target.role, changed: true };
}
