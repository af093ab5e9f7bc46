/**
 * What a tenant's admins see of its directory (docs/directory-sync.md#what-tenant-admins-see):
 * every directory user, deactivated or not yet signed in included, with its groups and the
 * membership it is bound to (none until its person first signs in).
 */
import { directoryUsersPage } from '../db/queries/directory-list';
import { groupsOfUsers } from '../db/queries/directory-users';
import type { Transaction } from '../db/tenant-scope';
import { pageByCreation } from './pagination';

export interface DirectoryUserView {
  id: string;
  userName: string;
  externalId: string | null;
  displayName: string | null;
  emails: string[];
  active: boolean;
  /** The role the directory's groups give (the member's role once bound). */
  role: string;
  groups: Array<{ id: string; displayName: string }>;
  /** The bound membership's user id; null until the person first signs in. */
  memberId: string | null;
  createdAt: Date;
  updatedAt: Date;
}

/** One page of the tenant's directory users, oldest first. */
export async function listDirectoryUsers(trx: Transaction, tenantId: string, opts: { limit: number; cursor?: string }): Promise<{ users: DirectoryUserView[]; nextCursor: string | null }> {
  const { page, nextCursor } = await pageByCreation((limit, after) => directoryUsersPage(trx, tenantId, limit, after), opts);
  const groups = await groupsOfUsers(trx, tenantId, page.map((u) => u.id));
  return {
    users: page.map((u) => ({
      id: u.id,
      userName: u.user_name,
      externalId: u.external_id,
      displayName: u.display_name,
      emails: u.emails.map((e) => e.value),
      active: u.active,
      role: u.role,
      groups: (groups.get(u.id) ?? []).map((g) => ({ id: g.id, displayName: g.display_name })),
      memberId: u.user_id,
      createdAt: u.created_at,
      updatedAt: u.updated_at,
    })),
    nextCursor,
  };
}
