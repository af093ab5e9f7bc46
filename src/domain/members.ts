/**
 * Tenant members (users rows). Functions take the request's tenant-scoped transaction.
 */
import type { Knex } from 'knex';
import type { UserRow } from '../db/models';
import { ApiError } from '../http/errors';
import { pageByCreation } from './pagination';

/** One page of the tenant's members, oldest first. */
export async function listMembers(trx: Knex.Transaction, tenantId: string, opts: { limit: number; cursor?: string }): Promise<{ members: UserRow[]; nextCursor: string | null }> {
  const { page, nextCursor } = await pageByCreation<UserRow>(trx, trx('users').where({ tenant_id: tenantId }), opts);
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
export async function addMember(trx: Knex.Transaction, tenantId: string, m: NewMember): Promise<UserRow> {
  const rows = (await trx('users')
    .insert({ tenant_id: tenantId, issuer: m.issuer, subject: m.subject, email: m.email, display_name: m.displayName, role: m.role })
    .onConflict(['tenant_id', 'issuer', 'subject'])
    .ignore()
    .returning('*')) as UserRow[];
  if (!rows[0]) throw new ApiError('conflict', `Subject '${m.subject}' of issuer '${m.issuer}' is already a member of this tenant.`);
  return rows[0];
}

/**
 * Removes a member. The tenant's admins are locked first, so two concurrent removals cannot
 * both pass the last-admin check.
 */
export async function removeMember(trx: Knex.Transaction, tenantId: string, userId: string): Promise<void> {
  const admins = (await trx('users').where({ tenant_id: tenantId, role: 'admin' }).forUpdate().select('id')) as Array<{ id: string }>;
  const target = (await trx('users').where({ tenant_id: tenantId, id: userId }).first('id', 'role')) as Pick<UserRow, 'id' | 'role'> | undefined;
  if (!target) throw new ApiError('notFound', `No member with user id ${userId} in this tenant.`);
  if (target.role === 'admin' && admins.length <= 1) {
    throw new ApiError('conflict', 'The last admin of a tenant cannot be removed; make another member admin first.');
  }
  await trx('users').where({ tenant_id: tenantId, id: userId }).delete();
}
