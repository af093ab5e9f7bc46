/**
 * Binding a directory user to a person (docs/directory-sync.md#directory-users-are-members): at
 * the first request that resolves to a directory-managed tenant, the active directory user
 * whose userName or emails equal the token's verified email (trimmed, NFKC, case-folded), or
 * whose externalId equals the tenant's external id claim, becomes the caller's membership, with
 * the role its groups give. The decision (src/tenancy/decide.ts) already checked that the
 * tenant trusts the token's issuer and that no removal mark stands.
 */
import { insertMembership } from '../db/queries/enter-tenant';
import { bindDirectoryUser as bindRow, bindExistingMembership, findBindableDirectoryUser, setMemberRole } from '../db/queries/directory-users';
import type { Transaction } from '../db/tenant-scope';
import { ApiError } from '../errors';
import { recordEvent, type EventOrigin } from './events';
import { emailKey } from './scim/resources';

/** Binds the caller to the matching directory user; false when none matches (or a concurrent request bound it). */
export async function bindDirectoryUser(
  trx: Transaction,
  origin: EventOrigin,
  b: { tenantId: string; tenantSlug: string; caller: { issuer: string; subject: string; name: string | null }; email: string | null; externalId: string | null },
): Promise<boolean> {
  const du = await findBindableDirectoryUser(trx, b.tenantId, b.email ? [emailKey(b.email)] : [], b.externalId);
  if (!du) return false;
  const inserted = await insertMembership(trx, {
    tenantId: b.tenantId,
    issuer: b.caller.issuer,
    subject: b.caller.subject,
    email: du.emails.find((e) => e.primary)?.value ?? du.emails[0]?.value ?? b.email ?? du.user_name,
    displayName: du.display_name ?? b.caller.name,
    role: du.role,
  });
  if (!inserted || !inserted.made) return false;
  await bindRow(trx, b.tenantId, du.id, inserted.member.userId);
  await recordEvent(trx, origin, {
    action: 'member.updated',
    tenantId: b.tenantId,
    target: { type: 'member', id: inserted.member.userId },
    data: { member: { user_id: inserted.member.userId, directory_user_id: du.id, user_name: du.user_name, issuer: b.caller.issuer, subject: b.caller.subject, role: du.role }, bound: true, source: 'directory' },
  });
  return true;
}

/**
 * Binds a member who was there before the directory (docs/directory-sync.md#members-who-were-there-first)
 * to the directory user their verified email names: the directory's from now on. Their role
 * becomes the one the directory's groups give (a `member.role_changed` event when it changes);
 * a deactivated directory user refuses them from this request on. False when a concurrent
 * request bound either side first.
 */
export async function bindExistingMember(trx: Transaction, origin: EventOrigin, b: { tenantId: string; userId: string; directoryUserId: string }): Promise<boolean> {
  const bound = await bindExistingMembership(trx, b.tenantId, b.directoryUserId, b.userId);
  if (!bound) return false;
  const du = bound.row;
  const member = { user_id: b.userId, directory_user_id: du.id, user_name: du.user_name, role: du.role };
  await recordEvent(trx, origin, {
    action: 'member.updated',
    tenantId: b.tenantId,
    target: { type: 'member', id: b.userId },
    data: { member, bound: true, existing_member: true, active: du.active, source: 'directory' },
  });
  if (bound.roleBefore !== du.role) {
    await setMemberRole(trx, b.tenantId, b.userId, du.role);
    await recordEvent(trx, origin, {
      action: 'member.role_changed',
      tenantId: b.tenantId,
      target: { type: 'member', id: b.userId },
      data: { member, before: { role: bound.roleBefore }, after: { role: du.role }, source: 'directory_groups' },
    });
  }
  return true;
}

/** The refusal of a stranger to a directory-managed tenant whom no directory user names. */
export function notInDirectory(tenantSlug: string): ApiError {
  return new ApiError('accessDenied', `The user does not belong to tenant '${tenantSlug}'. Its members come from its directory (SCIM), invitations and platform admins.`);
}
