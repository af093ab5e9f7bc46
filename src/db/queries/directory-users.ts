/**
 * A tenant's directory users (`directory_users`, migration 018), written by SCIM
 * (docs/directory-sync.md#directory-users-are-members). Every query runs inside the tenant's
 * transaction, under row-level security.
 */
import type { Knex } from 'knex';

/** Of these members, those bound to a directory user. */
export async function directoryBoundMembers(trx: Knex.Transaction, tenantId: string, userIds: readonly string[]): Promise<Set<string>> {
  if (userIds.length === 0) return new Set();
  const rows = (await trx('directory_users').where({ tenant_id: tenantId }).whereIn('user_id', [...userIds]).select('user_id')) as Array<{ user_id: string }>;
  return new Set(rows.map((r) => r.user_id));
}
