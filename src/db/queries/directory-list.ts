/**
 * What a tenant's admins see of its directory (docs/directory-sync.md#what-tenant-admins-see):
 * its users page by page, and which members are a directory user's and whether that user is
 * active. Read inside the tenant's transaction, under row-level security.
 */
import type { Knex } from 'knex';
import type { DirectoryListEntry } from '../../context/records';
import type { KeysetPosition, Positioned } from './keyset-page';

/** Up to `limit` directory users of the tenant after `after`, oldest first (the directory_users_created_order index). */
export async function directoryUsersPage(trx: Knex.Transaction, tenantId: string, limit: number, after?: KeysetPosition): Promise<Array<Positioned<DirectoryListEntry>>> {
  const position = after ? 'and (created_at, id) > (?::timestamptz, ?::uuid)' : '';
  const { rows } = await trx.raw<{ rows: Array<Positioned<DirectoryListEntry>> }>(
    `select id, user_name, external_id, display_name, emails, active, role, user_id, created_at, updated_at,
            to_char(created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as cursor_ts
       from directory_users
      where tenant_id = ? ${position}
      order by created_at, id
      limit ?`,
    [tenantId, ...(after ? [after.createdAt, after.id] : []), limit],
  );
  return rows;
}

/** Of these members, those that are a directory user's: member id → whether that user is active. */
export async function directoryStateOfMembers(trx: Knex.Transaction, tenantId: string, userIds: readonly string[]): Promise<Map<string, { active: boolean }>> {
  if (userIds.length === 0) return new Map();
  const rows = (await trx('directory_users').where({ tenant_id: tenantId }).whereIn('user_id', [...userIds]).select('user_id', 'active')) as Array<{ user_id: string; active: boolean }>;
  return new Map(rows.map((r) => [r.user_id, { active: r.active }]));
}
