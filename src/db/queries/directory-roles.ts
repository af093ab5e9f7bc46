/**
 * The roles a tenant's directory groups give (docs/directory-sync.md#groups-give-roles): a
 * directory user's role is the first `group_roles` mapping whose group holds them and whose role
 * exists in the tenant, else `member`. Computed set-based for the users named (all when null),
 * written to `directory_users.role` and to the bound membership (`users.role`, whose trigger
 * notifies the decision facts).
 */
import type { Knex } from 'knex';

export interface DirectoryRoleChange {
  directory_user_id: string;
  user_id: string | null;
  before: string;
  after: string;
}

/**
 * Recomputes the roles; returns the bound memberships whose role changed, with before and
 * after (the unbound only get their stored role updated, applied when they bind).
 */
export async function recomputeDirectoryRoles(trx: Knex.Transaction, tenantId: string, memberIds: readonly string[] | null): Promise<DirectoryRoleChange[]> {
  const { rows } = await trx.raw<{ rows: DirectoryRoleChange[] }>(
    `with s as (
       select coalesce((select group_roles from directory_settings where tenant_id = :tid), '[]'::jsonb) as gr
     ), computed as (
       select du.id, du.user_id, coalesce((
         select e.v ->> 'role'
           from s, jsonb_array_elements(s.gr) with ordinality as e(v, ord)
           join directory_groups g on g.tenant_id = :tid and g.display_name = e.v ->> 'group'
           join directory_group_members gm on gm.tenant_id = :tid and gm.group_id = g.id and gm.member_id = du.id
          where exists (select 1 from platform_roles pr where pr.key = e.v ->> 'role')
             or exists (select 1 from tenant_roles tr where tr.tenant_id = :tid and tr.key = e.v ->> 'role')
          order by e.ord limit 1), 'member') as role
         from directory_users du
        where du.tenant_id = :tid and (:all or du.id = any(:ids::uuid[]))
     ), dir as (
       update directory_users du set role = c.role
         from computed c
        where du.tenant_id = :tid and du.id = c.id and du.role <> c.role
       returning du.id
     ), old as (
       select u.id, u.role from users u join computed c on c.user_id = u.id
        where u.tenant_id = :tid and u.role <> c.role
     ), upd as (
       update users u set role = c.role
         from computed c
        where u.tenant_id = :tid and u.id = c.user_id and u.role <> c.role
       returning u.id, c.id as directory_user_id, c.role
     )
     select upd.directory_user_id, upd.id as user_id, old.role as before, upd.role as after
       from upd join old on old.id = upd.id`,
    { tid: tenantId, all: memberIds === null, ids: memberIds ?? [] },
  );
  return rows;
}
