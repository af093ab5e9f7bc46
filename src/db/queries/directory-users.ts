/**
 * A tenant's directory users (`directory_users`, migration 018), written by SCIM
 * (docs/directory-sync.md#directory-users-are-members). Every query runs inside the tenant's
 * transaction, under row-level security.
 */
import { userConditionSql, type DirectoryCondition, type UserColumn } from './directory-filter';
import type { Knex } from 'knex';
import type { DirectoryUser, DirectoryUserFields } from '../../context/records';

/** Of these members, those bound to a directory user. */
export async function directoryBoundMembers(trx: Knex.Transaction, tenantId: string, userIds: readonly string[]): Promise<Set<string>> {
  if (userIds.length === 0) return new Set();
  const rows = (await trx('directory_users').where({ tenant_id: tenantId }).whereIn('user_id', [...userIds]).select('user_id')) as Array<{ user_id: string }>;
  return new Set(rows.map((r) => r.user_id));
}

const dbFields = (f: DirectoryUserFields) => ({ ...f, name: JSON.stringify(f.name), emails: JSON.stringify(f.emails), attributes: JSON.stringify(f.attributes) });

/** Serialises a tenant's directory writes that check a limit or a uniqueness first. */
export async function lockDirectory(trx: Knex.Transaction, tenantId: string): Promise<void> {
  await trx.raw('select pg_advisory_xact_lock(hashtextextended(?, 0))', [`directory:${tenantId}`]);
}

export async function countDirectoryUsers(trx: Knex.Transaction, tenantId: string): Promise<number> {
  const row = (await trx('directory_users').where({ tenant_id: tenantId }).count<{ n: string }[]>({ n: '*' }))[0];
  return Number(row?.n ?? 0);
}

export async function insertDirectoryUser(trx: Knex.Transaction, tenantId: string, f: DirectoryUserFields): Promise<DirectoryUser> {
  const [row] = (await trx('directory_users').insert({ tenant_id: tenantId, ...dbFields(f) }).returning('*')) as DirectoryUser[];
  return row!;
}

export async function selectDirectoryUser(trx: Knex.Transaction, tenantId: string, id: string, forUpdate = false): Promise<DirectoryUser | null> {
  const q = trx('directory_users').where({ tenant_id: tenantId, id }).first('*');
  if (forUpdate) q.forUpdate();
  return ((await q) as DirectoryUser | undefined) ?? null;
}

export async function updateDirectoryUser(trx: Knex.Transaction, tenantId: string, id: string, f: DirectoryUserFields): Promise<DirectoryUser> {
  const [row] = (await trx('directory_users').where({ tenant_id: tenantId, id }).update({ ...dbFields(f), updated_at: trx.fn.now() }).returning('*')) as DirectoryUser[];
  return row!;
}

export async function deleteDirectoryUser(trx: Knex.Transaction, tenantId: string, id: string): Promise<void> {
  await trx('directory_users').where({ tenant_id: tenantId, id }).delete();
}

/** True when another directory user of the tenant has this userName key. */
export async function userNameTaken(trx: Knex.Transaction, tenantId: string, key: string, exceptId: string | null): Promise<boolean> {
  const q = trx('directory_users').where({ tenant_id: tenantId, user_name_key: key });
  if (exceptId) q.whereNot({ id: exceptId });
  return (await q.first('id')) !== undefined;
}

/** One page of the tenant's directory users matching `condition`, oldest first, and how many match. */
export async function pageDirectoryUsers(trx: Knex.Transaction, tenantId: string, condition: DirectoryCondition<UserColumn>, offset: number, limit: number): Promise<{ rows: DirectoryUser[]; total: number }> {
  const where = userConditionSql(condition);
  const { rows } = await trx.raw<{ rows: Array<DirectoryUser & { total: string }> }>(
    `select du.*, count(*) over () as total from directory_users du where du.tenant_id = ? and (${where.sql})
      order by du.created_at, du.id offset ? limit ?`,
    [tenantId, ...where.bindings, offset, limit] as Knex.RawBinding[],
  );
  if (rows.length === 0 && offset > 0) {
    const n = await trx.raw<{ rows: Array<{ n: string }> }>(`select count(*) as n from directory_users du where du.tenant_id = ? and (${where.sql})`, [tenantId, ...where.bindings] as Knex.RawBinding[]);
    return { rows: [], total: Number(n.rows[0]!.n) };
  }
  return { rows: rows.map(({ total: _t, ...r }) => r as DirectoryUser), total: rows.length ? Number(rows[0]!.total) : 0 };
}

/** The groups of each of these directory users: id → [{id, display_name}]. */
export async function groupsOfUsers(trx: Knex.Transaction, tenantId: string, ids: readonly string[]): Promise<Map<string, Array<{ id: string; display_name: string }>>> {
  const out = new Map<string, Array<{ id: string; display_name: string }>>();
  if (ids.length === 0) return out;
  const rows = (await trx('directory_group_members as gm')
    .join('directory_groups as g', function () {
      this.on('g.tenant_id', 'gm.tenant_id').andOn('g.id', 'gm.group_id');
    })
    .where('gm.tenant_id', tenantId)
    .whereIn('gm.member_id', [...ids])
    .orderBy('g.display_name')
    .select('gm.member_id', 'g.id', 'g.display_name')) as Array<{ member_id: string; id: string; display_name: string }>;
  for (const r of rows) out.set(r.member_id, [...(out.get(r.member_id) ?? []), { id: r.id, display_name: r.display_name }]);
  return out;
}

/**
 * Binds a directory user to a membership (its person's first sign-in): the first active,
 * unbound directory user of the tenant whose userName or emails match one of `emailKeys`, or
 * whose externalId equals `externalId`. Locked; null when none matches.
 */
export async function findBindableDirectoryUser(trx: Knex.Transaction, tenantId: string, emailKeys: readonly string[], externalId: string | null): Promise<DirectoryUser | null> {
  if (emailKeys.length === 0 && externalId === null) return null;
  const { rows } = await trx.raw<{ rows: DirectoryUser[] }>(
    `select * from directory_users
      where tenant_id = ? and user_id is null and active
        and (user_name_key = any(?::text[]) or email_keys && ?::text[] or (?::text is not null and external_id = ?::text))
      order by (?::text is not null and external_id = ?::text) desc, created_at, id
      limit 1 for update`,
    [tenantId, [...emailKeys], [...emailKeys], externalId, externalId, externalId, externalId],
  );
  return rows[0] ?? null;
}

export async function bindDirectoryUser(trx: Knex.Transaction, tenantId: string, id: string, userId: string): Promise<void> {
  await trx('directory_users').where({ tenant_id: tenantId, id }).update({ user_id: userId, updated_at: trx.fn.now() });
}

/**
 * Binds an existing membership to the directory user `id` if that user is still unbound and
 * the membership still has no directory user (locked; concurrent requests of the same person
 * bind once). Returns the bound directory user with the membership's role before, or null.
 */
export async function bindExistingMembership(trx: Knex.Transaction, tenantId: string, id: string, userId: string): Promise<{ row: DirectoryUser; roleBefore: string } | null> {
  const { rows } = await trx.raw<{ rows: Array<DirectoryUser & { role_before: string }> }>(
    `with member as (
       -- Not FOR UPDATE: concurrent requests of this member hold FOR KEY SHARE on the row (the facts statement).
       select id, role from users where tenant_id = ? and id = ? for no key update
     ), du as (
       select id from directory_users
        where tenant_id = ? and id = ? and user_id is null
          and not exists (select 1 from directory_users b where b.tenant_id = ? and b.user_id = ?)
        for update
     )
     update directory_users d set user_id = m.id, updated_at = now()
       from member m, du
      where d.tenant_id = ? and d.id = du.id
     returning d.*, m.role as role_before`,
    [tenantId, userId, tenantId, id, tenantId, userId, tenantId],
  );
  const r = rows[0];
  if (!r) return null;
  const { role_before: roleBefore, ...row } = r;
  return { row: row as DirectoryUser, roleBefore };
}

/** Sets a bound membership's role to its directory user's (the directory is the source of truth). */
export async function setMemberRole(trx: Knex.Transaction, tenantId: string, userId: string, role: string): Promise<void> {
  await trx('users').where({ tenant_id: tenantId, id: userId }).update({ role });
}
