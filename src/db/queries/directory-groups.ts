/**
 * A tenant's directory groups and their members (`directory_groups`,
 * `directory_group_members`, migration 018), written by SCIM (docs/directory-sync.md). Inside
 * the tenant's transaction, under row-level security; member changes are set-based.
 */
import type { Knex } from 'knex';
import type { DirectoryGroup, DirectoryGroupFields } from '../../context/records';
import { groupConditionSql, type DirectoryCondition, type GroupColumn } from './directory-filter';

export async function countDirectoryGroups(trx: Knex.Transaction, tenantId: string): Promise<number> {
  const row = (await trx('directory_groups').where({ tenant_id: tenantId }).count<{ n: string }[]>({ n: '*' }))[0];
  return Number(row?.n ?? 0);
}

export async function insertDirectoryGroup(trx: Knex.Transaction, tenantId: string, g: DirectoryGroupFields): Promise<DirectoryGroup> {
  const [row] = (await trx('directory_groups').insert({ tenant_id: tenantId, ...g }).returning('*')) as DirectoryGroup[];
  return row!;
}

export async function selectDirectoryGroup(trx: Knex.Transaction, tenantId: string, id: string, forUpdate = false): Promise<DirectoryGroup | null> {
  const q = trx('directory_groups').where({ tenant_id: tenantId, id }).first('*');
  if (forUpdate) q.forUpdate();
  return ((await q) as DirectoryGroup | undefined) ?? null;
}

export async function updateDirectoryGroup(trx: Knex.Transaction, tenantId: string, id: string, g: DirectoryGroupFields): Promise<DirectoryGroup> {
  const [row] = (await trx('directory_groups').where({ tenant_id: tenantId, id }).update({ ...g, updated_at: trx.fn.now() }).returning('*')) as DirectoryGroup[];
  return row!;
}

export async function deleteDirectoryGroup(trx: Knex.Transaction, tenantId: string, id: string): Promise<void> {
  await trx('directory_groups').where({ tenant_id: tenantId, id }).delete();
}

export async function displayNameTaken(trx: Knex.Transaction, tenantId: string, displayName: string, exceptId: string | null): Promise<boolean> {
  const q = trx('directory_groups').where({ tenant_id: tenantId, display_name: displayName });
  if (exceptId) q.whereNot({ id: exceptId });
  return (await q.first('id')) !== undefined;
}

export async function pageDirectoryGroups(trx: Knex.Transaction, tenantId: string, condition: DirectoryCondition<GroupColumn>, offset: number, limit: number): Promise<{ rows: DirectoryGroup[]; total: number }> {
  const where = groupConditionSql(condition);
  const n = await trx.raw<{ rows: Array<{ n: string }> }>(`select count(*) as n from directory_groups dg where dg.tenant_id = ? and (${where.sql})`, [tenantId, ...where.bindings] as Knex.RawBinding[]);
  const { rows } = await trx.raw<{ rows: DirectoryGroup[] }>(
    `select dg.* from directory_groups dg where dg.tenant_id = ? and (${where.sql}) order by dg.created_at, dg.id offset ? limit ?`,
    [tenantId, ...where.bindings, offset, limit] as Knex.RawBinding[],
  );
  return { rows, total: Number(n.rows[0]!.n) };
}

/** The members of these groups: group id → [{id, user_name}], ordered. */
export async function membersOfGroups(trx: Knex.Transaction, tenantId: string, groupIds: readonly string[]): Promise<Map<string, Array<{ id: string; user_name: string }>>> {
  const out = new Map<string, Array<{ id: string; user_name: string }>>();
  if (groupIds.length === 0) return out;
  const rows = (await trx('directory_group_members as gm')
    .join('directory_users as u', function () {
      this.on('u.tenant_id', 'gm.tenant_id').andOn('u.id', 'gm.member_id');
    })
    .where('gm.tenant_id', tenantId)
    .whereIn('gm.group_id', [...groupIds])
    .orderBy([{ column: 'u.created_at' }, { column: 'u.id' }])
    .select('gm.group_id', 'u.id', 'u.user_name')) as Array<{ group_id: string; id: string; user_name: string }>;
  for (const r of rows) out.set(r.group_id, [...(out.get(r.group_id) ?? []), { id: r.id, user_name: r.user_name }]);
  return out;
}

export async function memberIdsOfGroup(trx: Knex.Transaction, tenantId: string, groupId: string): Promise<string[]> {
  return ((await trx('directory_group_members').where({ tenant_id: tenantId, group_id: groupId }).select('member_id')) as Array<{ member_id: string }>).map((r) => r.member_id);
}

/** Of these ids, those that are not directory users of the tenant. */
export async function unknownDirectoryUsers(trx: Knex.Transaction, tenantId: string, ids: readonly string[]): Promise<string[]> {
  if (ids.length === 0) return [];
  const { rows } = await trx.raw<{ rows: Array<{ id: string }> }>(
    `select x.id from unnest(?::text[]) as x(id)
      where x.id !~ '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$'
         or not exists (select 1 from directory_users u where u.tenant_id = ? and u.id = x.id::uuid)`,
    [[...ids], tenantId],
  );
  return rows.map((r) => r.id);
}

/** Adds members (already there: unchanged); returns the ids added. */
export async function addGroupMembers(trx: Knex.Transaction, tenantId: string, groupId: string, ids: readonly string[]): Promise<string[]> {
  if (ids.length === 0) return [];
  const { rows } = await trx.raw<{ rows: Array<{ member_id: string }> }>(
    `insert into directory_group_members (tenant_id, group_id, member_id) select ?, ?, x::uuid from unnest(?::text[]) as x
      on conflict do nothing returning member_id`,
    [tenantId, groupId, [...new Set(ids)]],
  );
  return rows.map((r) => r.member_id);
}

/** Removes these members (null: every member); returns the ids removed. */
export async function removeGroupMembers(trx: Knex.Transaction, tenantId: string, groupId: string, ids: readonly string[] | null): Promise<string[]> {
  const q = trx('directory_group_members').where({ tenant_id: tenantId, group_id: groupId });
  if (ids !== null) {
    const valid = ids.filter((i) => /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/.test(i));
    if (valid.length === 0) return [];
    q.whereIn('member_id', valid);
  }
  return ((await q.delete().returning('member_id')) as Array<{ member_id: string }>).map((r) => r.member_id);
}
