/**
 * The isolation audit's checks (docs/security.md#audit), one named function per check: set-based
 * SQL over every tenant-owned table. Nothing is loaded row by row; each check is one statement
 * (UNION ALL over the tables it covers) whose output is only the violating rows, so a healthy
 * database of any size returns nothing but the per-tenant COUNTs. src/domain/audit.ts assembles the
 * report.
 *
 * Costs below are for N rows in the scanned table and M in the referenced one. With the schema's
 * composite foreign keys intact every check finds nothing; the anti-joins then run as hash or
 * merge anti-joins over (tenant_id, id) primary keys, one pass over each table. Scoped to one
 * tenant, every scan becomes an index range scan on the (tenant_id, …) indexes.
 *
 * `trx` must see all tenants (the reader role of `withPlatformRead`, or a superuser).
 */
import type { Knex } from 'knex';
import { TenantRow } from '../models';
import { TENANT_TABLES, type TenantTable } from '../schema';

export type AuditCheck = 'cross_tenant_user_access' | 'orphaned_record' | 'board_membership_violation' | 'data_consistency';

/** A violating row as a check reports it (a finding, not a row of a table). */
export interface AuditViolation {
  tenant_id: string;
  check: AuditCheck;
  table: string;
  row_id: string;
  message: string;
}

/** Which rows a check looks at, and how many violations per statement part it returns. */
export interface AuditScope {
  /** One tenant's id, or null for every tenant. */
  readonly tenantId: string | null;
  /** At most this many rows per part; one more is fetched to detect truncation. */
  readonly limit: number;
}

/** A check's findings, and whether a part had more than `limit`. */
export interface CheckResult {
  readonly rows: AuditViolation[];
  readonly truncated: boolean;
}

/** How each table names one of its rows (board_members has no id of its own). */
const ROW_ID: Record<TenantTable, string> = {
  users: 'r.id::text',
  boards: 'r.id::text',
  board_members: "r.board_id::text || ':' || r.user_id::text",
  generations: 'r.id::text',
  provider_configs: 'r.id::text',
  credit_transactions: 'r.id::text',
  invitations: 'r.id::text',
  tenant_roles: 'r.key::text',
  tenant_role_permissions: "r.role_key::text || ':' || r.permission_key::text",
  member_removals: "r.issuer || ' ' || r.subject",
  scim_tokens: 'r.id::text',
  directory_settings: 'r.tenant_id::text',
  directory_users: 'r.id::text',
  directory_groups: 'r.id::text',
  directory_group_members: "r.group_id::text || ':' || r.member_id::text",
};

/** Columns that reference a user (cross-tenant user access). */
const USER_REFERENCES: ReadonlyArray<{ table: TenantTable; column: string }> = [
  { table: 'board_members', column: 'user_id' },
  { table: 'boards', column: 'created_by' },
  { table: 'credit_transactions', column: 'user_id' },
  { table: 'invitations', column: 'invited_by' },
  { table: 'invitations', column: 'accepted_by' },
];

/** Every composite foreign key to a parent in the same tenant (orphaned records). */
const PARENTS: ReadonlyArray<{ table: TenantTable; column: string; parent: 'users' | 'boards'; noun: string }> = [
  { table: 'generations', column: 'board_id', parent: 'boards', noun: 'board' },
  { table: 'board_members', column: 'board_id', parent: 'boards', noun: 'board' },
  { table: 'board_members', column: 'user_id', parent: 'users', noun: 'user' },
  { table: 'boards', column: 'created_by', parent: 'users', noun: 'user' },
  { table: 'credit_transactions', column: 'user_id', parent: 'users', noun: 'user' },
  { table: 'invitations', column: 'invited_by', parent: 'users', noun: 'user' },
  { table: 'invitations', column: 'accepted_by', parent: 'users', noun: 'user' },
];


const scopeSql = (s: AuditScope, alias: string) => (s.tenantId ? `and ${alias}.tenant_id = ?` : '');
const scopeBinds = (s: AuditScope, n: number) => (s.tenantId ? Array<string>(n).fill(s.tenantId) : []);

/** Runs the parts as one UNION ALL; each part is capped on its own, so one flooded table cannot hide the others. */
async function runParts(trx: Knex.Transaction, s: AuditScope, parts: string[]): Promise<CheckResult> {
  if (!parts.length) return { rows: [], truncated: false };
  const sql = parts.map((p, i) => `select ${i} as part, x.* from (${p} limit ${s.limit + 1}) x`).join('\nunion all\n');
  const rows = (await trx.raw(sql, scopeBinds(s, parts.length))).rows as Array<AuditViolation & { part: number }>;
  const counts = new Map<number, number>();
  let truncated = false;
  const kept = rows.filter((r) => {
    const n = (counts.get(r.part) ?? 0) + 1;
    counts.set(r.part, n);
    if (n > s.limit) truncated = true;
    return n <= s.limit;
  });
  return { rows: kept.map(({ part: _part, ...r }) => r), truncated };
}

/** The tenants the audit reports on, oldest first. */
export async function auditedTenants(trx: Knex.Transaction, tenantId: string | null): Promise<Array<{ id: string; slug: string; name: string }>> {
  const q = TenantRow.query(trx).orderBy([{ column: 'created_at' }, { column: 'id' }]).select('id', 'slug', 'name');
  if (tenantId) q.where({ id: tenantId });
  return q;
}

/**
 * Statistics: one COUNT … GROUP BY tenant_id per table, in one round trip. Cost: one index-only
 * (or sequential) scan per table, O(N); for one tenant an index range scan on its tenant_id.
 */
export async function countRowsPerTenant(trx: Knex.Transaction, tenantId: string | null): Promise<Array<{ tenant_id: string; tbl: TenantTable; n: string }>> {
  const s: AuditScope = { tenantId, limit: 0 };
  const scope = (alias: string) => scopeSql(s, alias);
  return (
    await trx.raw(
      TENANT_TABLES.map((t) => `select tenant_id, '${t}' as tbl, count(*)::bigint as n from ${t} r where true ${scope('r')} group by tenant_id`).join(
      '\nunion all\n',
    ),
      scopeBinds(s, TENANT_TABLES.length),
    )
  ).rows as Array<{ tenant_id: string; tbl: TenantTable; n: string }>;
}

/**
 * Cross-tenant user access: the referenced user id is not a user of the row's tenant but is a
 * user of another. Cost: a hash anti-join against users' primary key plus a hash join on
 * users.id, O(N + M).
 */
export async function findCrossTenantUserAccess(trx: Knex.Transaction, s: AuditScope): Promise<CheckResult> {
  const scope = (alias: string) => scopeSql(s, alias);
  return runParts(trx, s, USER_REFERENCES.map(
      ({ table, column }) => `
      select distinct on (r.tenant_id, ${ROW_ID[table]})
        r.tenant_id, 'cross_tenant_user_access' as "check", '${table}' as "table", ${ROW_ID[table]} as row_id,
        format('%s row %s references user %s, who belongs to tenant %s, not to this tenant.',
          '${table}', ${ROW_ID[table]}, r.${column}, coalesce(ot.slug || ' (' || o.tenant_id || ')', o.tenant_id::text)) as message
      from ${table} r
      join users o on o.id = r.${column} and o.tenant_id <> r.tenant_id
      left join tenants ot on ot.id = o.tenant_id
      where r.${column} is not null ${scope('r')}
        and not exists (select 1 from users u where u.tenant_id = r.tenant_id and u.id = r.${column})
      order by r.tenant_id, ${ROW_ID[table]}, o.tenant_id`,
    ),);
}

/**
 * Orphaned records, part 1: rows whose tenant does not exist (impossible with the foreign keys
 * in place). All tenants only: a scoped tenant exists by definition. Cost: a hash anti-join
 * against tenants, O(N) per table.
 */
export async function findRowsWithoutTenant(trx: Knex.Transaction, s: AuditScope): Promise<CheckResult> {
  if (s.tenantId) return { rows: [], truncated: false };
  return runParts(trx, s, TENANT_TABLES.map(
          (table) => `
      select r.tenant_id, 'orphaned_record' as "check", '${table}' as "table", ${ROW_ID[table]} as row_id,
        format('%s row %s belongs to tenant %s, which does not exist.', '${table}', ${ROW_ID[table]}, r.tenant_id) as message
      from ${table} r
      where not exists (select 1 from tenants t where t.id = r.tenant_id)
      order by r.tenant_id, ${ROW_ID[table]}`,
        ),);
}

/**
 * Orphaned records, part 2: the parent named by a composite foreign key is not in the row's own
 * tenant: it is in another tenant, or gone. Cost: a hash anti-join on the parent's primary key,
 * plus a hash join on parent id for the (normally empty) survivors, O(N + M).
 */
export async function findOrphanedRecords(trx: Knex.Transaction, s: AuditScope): Promise<CheckResult> {
  const scope = (alias: string) => scopeSql(s, alias);
  return runParts(trx, s, PARENTS.map(
      ({ table, column, parent, noun }) => `
      select distinct on (r.tenant_id, ${ROW_ID[table]})
        r.tenant_id, 'orphaned_record' as "check", '${table}' as "table", ${ROW_ID[table]} as row_id,
        case when o.tenant_id is null
          then format('%s row %s references %s %s, which does not exist.', '${table}', ${ROW_ID[table]}, '${noun}', r.${column})
          else format('%s row %s references %s %s, which belongs to tenant %s instead of the row''s own tenant.',
            '${table}', ${ROW_ID[table]}, '${noun}', r.${column}, coalesce(ot.slug || ' (' || o.tenant_id || ')', o.tenant_id::text))
        end as message
      from ${table} r
      left join ${parent} o on o.id = r.${column} and o.tenant_id <> r.tenant_id
      left join tenants ot on ot.id = o.tenant_id
      where r.${column} is not null ${scope('r')}
        and not exists (select 1 from ${parent} p where p.tenant_id = r.tenant_id and p.id = r.${column})
      order by r.tenant_id, ${ROW_ID[table]}, o.tenant_id`,
    ),);
}

/**
 * Board membership: the member must be a user of the board's tenant. The board's tenant is the
 * row's own when the board is there (the normal case: one anti-join on users, O(N + M)), else
 * the tenant that holds a board with that id (hash join on boards.id for the survivors).
 */
export async function findBoardMembershipViolations(trx: Knex.Transaction, s: AuditScope): Promise<CheckResult> {
  const scope = (alias: string) => scopeSql(s, alias);
  return runParts(trx, s, [
    `
      select r.tenant_id, 'board_membership_violation' as "check", 'board_members' as "table", ${ROW_ID.board_members} as row_id,
        format('User %s is a member of board %s but is not a user of the board''s tenant.', r.user_id, r.board_id) as message
      from board_members r
      where true ${scope('r')}
        and exists (select 1 from boards b where b.tenant_id = r.tenant_id and b.id = r.board_id)
        and not exists (select 1 from users u where u.tenant_id = r.tenant_id and u.id = r.user_id)
      order by r.tenant_id, ${ROW_ID.board_members}`,
    `
      select distinct on (r.tenant_id, ${ROW_ID.board_members})
        r.tenant_id, 'board_membership_violation' as "check", 'board_members' as "table", ${ROW_ID.board_members} as row_id,
        format('User %s is a member of board %s of tenant %s but is not a user of that tenant.',
          r.user_id, r.board_id, coalesce(bt.slug || ' (' || b.tenant_id || ')', b.tenant_id::text)) as message
      from board_members r
      join boards b on b.id = r.board_id and b.tenant_id <> r.tenant_id
      left join tenants bt on bt.id = b.tenant_id
      where true ${scope('r')}
        and not exists (select 1 from boards own where own.tenant_id = r.tenant_id and own.id = r.board_id)
        and not exists (select 1 from users u where u.tenant_id = b.tenant_id and u.id = r.user_id)
      order by r.tenant_id, ${ROW_ID.board_members}, b.tenant_id`,
  ]);
}

/**
 * Credit balances: balance_after must equal the running sum of amount in seq order per tenant.
 * A run of transactions off by the same amount (one wrong amount shifts every later balance)
 * is reported once, at its first transaction. Cost: one ordered scan of the (tenant_id, seq)
 * index feeding two window passes with the same ordering: no sort, O(N).
 */
export async function findCreditBalanceMismatches(trx: Knex.Transaction, s: AuditScope): Promise<CheckResult> {
  const scope = (alias: string) => scopeSql(s, alias);
  return runParts(trx, s, [
    `
      select tenant_id, 'data_consistency' as "check", 'credit_transactions' as "table", id::text as row_id,
        format('Credit transaction %s (seq %s) has balance_after %s, but the amounts up to it sum to %s (off by %s).',
          id, seq, balance_after, expected, off) as message
      from (
        select s.*, lag(s.off, 1, 0::bigint) over (partition by s.tenant_id order by s.seq) as prev_off
        from (
          select r.tenant_id, r.id, r.seq, r.balance_after,
            sum(r.amount::bigint) over w as expected,
            r.balance_after - sum(r.amount::bigint) over w as off
          from credit_transactions r
          where true ${scope('r')}
          window w as (partition by r.tenant_id order by r.seq rows between unbounded preceding and current row)
        ) s
      ) t
      where off <> 0 and off <> prev_off
      order by tenant_id, seq`,
  ]);
}

/**
 * Row-level security on every tenant table: present, enabled, forced (so even the owner is
 * confined) and with a policy. Catalog lookups, constant cost.
 */
export async function readRowSecurityState(
  trx: Knex.Transaction,
): Promise<Array<{ name: string; present: boolean; enabled: boolean; forced: boolean; has_policy: boolean }>> {
  return (
    await trx.raw(
      `select t.name, c.oid is not null as present, coalesce(c.relrowsecurity, false) as enabled,
          coalesce(c.relforcerowsecurity, false) as forced,
          exists (select 1 from pg_policy p where p.polrelid = c.oid) as has_policy
       from unnest(array[${TENANT_TABLES.map((t) => `'${t}'`).join(', ')}]) with ordinality as t(name, n)
       left join pg_class c on c.oid = to_regclass(t.name)
       order by t.n`,
    )
  ).rows as Array<{ name: string; present: boolean; enabled: boolean; forced: boolean; has_policy: boolean }>;
}

/**
 * Roles that let `runtimeRole` bypass row-level security: itself or a role it is a member of
 * (and may SET ROLE to) that is a superuser or has BYPASSRLS. Catalog lookup over pg_roles.
 */
export async function findRowSecurityBypassRoles(
  trx: Knex.Transaction,
  runtimeRole: string,
): Promise<Array<{ rolname: string; rolsuper: boolean; rolbypassrls: boolean }>> {
  return (
    await trx.raw(
      `select r.rolname, r.rolsuper, r.rolbypassrls
       from pg_roles me
       join pg_roles r on pg_has_role(me.oid, r.oid, 'MEMBER')
       where me.rolname = ? and (r.rolsuper or r.rolbypassrls)
       order by r.rolname`,
      [runtimeRole],
    )
  ).rows as Array<{ rolname: string; rolsuper: boolean; rolbypassrls: boolean }>;
}

/** A tenant's id by slug, for scoping the audit. */
export async function findTenantIdBySlug(trx: Knex.Transaction, slug: string): Promise<{ id: string } | null> {
  const row = await TenantRow.query(trx).findOne({ slug }).select('id');
  return row ? { id: row.id } : null;
}
