/**
 * Member rows for role changes, removal and leaving: the locks that keep "at least one admin"
 * true under concurrency. Called with the request's tenant transaction.
 *
 * Lock order, the same for every membership change so two of them cannot wait for each other
 * in a cycle: (1) a member row about to be deleted, FOR UPDATE (this waits for that member's
 * in-flight requests, which hold their row FOR KEY SHARE); (2) the tenant's admin rows, FOR NO
 * KEY UPDATE in id order; (3) the target row; (4) the invitations the member sent.
 */
import type { Knex } from 'knex';
import type { Member, RoleKey } from '../../context/entities';
import { ADMIN_ROLE } from '../../context/roles';
import { UserRow } from '../models';
import { fetchKeysetRows, type KeysetPosition, type Positioned } from './keyset-page';

/** A users row as the domain speaks of it: the one mapping of members. */
export function memberOf(u: Pick<UserRow, 'id' | 'issuer' | 'subject' | 'email' | 'display_name' | 'role' | 'created_at'>): Member {
  return { userId: u.id, issuer: u.issuer, subject: u.subject, email: u.email, displayName: u.display_name, role: u.role, createdAt: u.created_at };
}

const memberOrUndefined = (u: UserRow | undefined): Member | undefined => (u ? memberOf(u) : undefined);

/** Up to `limit` members of the tenant after `after`, oldest first (src/domain/pagination.ts pages them). */
export async function membersPage(trx: Knex.Transaction, tenantId: string, limit: number, after?: KeysetPosition): Promise<Array<Positioned<{ id: string; member: Member }>>> {
  const rows = await fetchKeysetRows(UserRow.query(trx).where({ tenant_id: tenantId }), limit, after);
  return rows.map((r) => ({ id: r.id, cursor_ts: r.cursor_ts, member: memberOf(r) }));
}

/** A member who may change memberships, as `lockMemberAdministrators` finds them. */
export interface MemberAdministrator {
  readonly userId: string;
  readonly role: RoleKey;
  /** Their role also holds every permission of `alsoHolding`. */
  readonly holdsAll: boolean;
}

/**
 * Locks the rows (FOR NO KEY UPDATE, in id order) of the tenant's members whose role holds
 * `permission` or is `admin`, and says of each whether the role also holds every one of
 * `alsoHolding`. Two membership changes in one tenant thus run one after the other, and the
 * second sees the first's result. NO KEY UPDATE does not conflict with the FOR KEY SHARE that
 * every in-flight request holds on its caller's row (app_tenant_facts), so it never waits for
 * ordinary traffic.
 */
export async function lockMemberAdministrators(trx: Knex.Transaction, tenantId: string, permission: string, alsoHolding: readonly string[]): Promise<MemberAdministrator[]> {
  const rows = (await trx.raw<{ rows: Array<{ id: string; role: string; holds_all: boolean }> }>(
    `with held as (
       select role_key as key, permission_key from platform_role_permissions
       union all
       select role_key, permission_key from tenant_role_permissions where tenant_id = ?
     )
     select u.id, u.role,
            (select count(distinct h.permission_key) from held h where h.key = u.role and h.permission_key = any(?::text[])) = ? as holds_all
       from users u
      where u.tenant_id = ? and (u.role = ? or exists (select 1 from held h where h.key = u.role and h.permission_key = ?))
      order by u.id
        for no key update of u`,
    [tenantId, alsoHolding as string[], new Set(alsoHolding).size, tenantId, ADMIN_ROLE, permission],
  )).rows;
  return rows.map((r) => ({ userId: r.id, role: r.role, holdsAll: r.holds_all }));
}

/** The member with `userId`, locked against concurrent changes; undefined when absent. */
export async function findMemberForUpdate(trx: Knex.Transaction, tenantId: string, userId: string): Promise<Member | undefined> {
  return memberOrUndefined((await trx('users').where({ tenant_id: tenantId, id: userId }).forNoKeyUpdate().first()) as UserRow | undefined);
}

/**
 * Locks the member row that is about to be deleted (FOR UPDATE): waits for the member's
 * in-flight requests to end, before any admin row is locked. Undefined when absent.
 */
export async function lockMemberForDelete(trx: Knex.Transaction, tenantId: string, userId: string): Promise<Member | undefined> {
  return memberOrUndefined((await trx('users').where({ tenant_id: tenantId, id: userId }).forUpdate().first()) as UserRow | undefined);
}

/**
 * The inviting admin's row, locked FOR SHARE (a demotion or removal of that admin waits for the
 * invitation to commit, then revokes it; or the invitation waits and sees the new role).
 * Undefined when the member is gone.
 */
export async function lockInviter(trx: Knex.Transaction, tenantId: string, userId: string): Promise<Pick<Member, 'userId' | 'role'> | undefined> {
  const row = (await trx('users').where({ tenant_id: tenantId, id: userId }).forShare().first('id', 'role')) as Pick<UserRow, 'id' | 'role'> | undefined;
  return row && { userId: row.id, role: row.role };
}

export async function setMemberRole(trx: Knex.Transaction, tenantId: string, userId: string, role: RoleKey): Promise<Member> {
  const [row] = (await trx('users').where({ tenant_id: tenantId, id: userId }).update({ role }).returning('*')) as UserRow[];
  return memberOf(row!);
}

/** Deletes the member; waits for the member's in-flight requests (their FOR KEY SHARE) to end. */
/** Adds a member; undefined when the subject of this issuer already is one. */
export async function insertMemberIfAbsent(
  trx: Knex.Transaction,
  tenantId: string,
  m: { issuer: string; subject: string; email: string; displayName: string | null; role: RoleKey },
): Promise<Member | undefined> {
  const rows = (await trx('users')
    .insert({ tenant_id: tenantId, issuer: m.issuer, subject: m.subject, email: m.email, display_name: m.displayName, role: m.role })
    .onConflict(['tenant_id', 'issuer', 'subject'])
    .ignore()
    .returning('*')) as Array<UserRow>;
  return memberOrUndefined(rows[0]);
}

export async function deleteMember(trx: Knex.Transaction, tenantId: string, userId: string): Promise<number> {
  return trx('users').where({ tenant_id: tenantId, id: userId }).delete();
}

/**
 * The comparison key of a stored email, in SQL: trimmed, Unicode NFKC, lower case; compared
 * with `emailKey()` of the other address (src/domain/email.ts). normalize() needs a UTF8
 * database; on any other encoding the key is trimmed and lower-cased only.
 */
const TRIMMED = "btrim(email, E' \\t\\n\\r\\f\\x0B')";
export const EMAIL_KEY_SQL = `lower(case when current_setting('server_encoding') = 'UTF8' then normalize(${TRIMMED}, NFKC) else ${TRIMMED} end)`;

/** True when a member of the tenant has this email (`key` is its emailKey). */
export async function memberWithEmailExists(trx: Knex.Transaction, tenantId: string, key: string): Promise<boolean> {
  const row = await trx('users').where({ tenant_id: tenantId }).whereRaw(`${EMAIL_KEY_SQL} = ?`, [key]).first('id');
  return row !== undefined;
}
