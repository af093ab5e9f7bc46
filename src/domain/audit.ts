/**
 * The isolation audit (PRODUCT.md §9): set-based SQL over every tenant-owned table. Nothing is
 * loaded row by row; each check is one statement (UNION ALL over the tables it covers) whose
 * output is only the violating rows, so a healthy database of any size returns nothing but the
 * per-tenant COUNTs.
 *
 * Costs below are for N rows in the scanned table and M in the referenced one. With the schema's
 * composite foreign keys intact every check finds nothing; the anti-joins then run as hash or
 * merge anti-joins over (tenant_id, id) primary keys, one pass over each table. Scoped to one
 * tenant, every scan becomes an index range scan on the (tenant_id, …) indexes.
 */
import type { Knex } from 'knex';
import { APP_ROLE, TENANT_TABLES, type TenantTable } from '../db/migrations/001-schema';
import { withPlatformRead } from '../db/tenant-scope';
import { ApiError } from '../http/errors';

export type AuditCheck = 'cross_tenant_user_access' | 'orphaned_record' | 'board_membership_violation' | 'data_consistency';

export interface AuditFinding {
  readonly check: AuditCheck;
  readonly table: string;
  /** The row's id; `<board_id>:<user_id>` for board_members; null for configuration findings. */
  readonly rowId: string | null;
  readonly message: string;
}

export interface TenantAuditResult {
  readonly tenantId: string;
  readonly slug: string;
  readonly name: string;
  readonly statistics: Record<TenantTable, number>;
  readonly violations: AuditFinding[];
}

export interface AuditResult {
  readonly tenants: TenantAuditResult[];
  /** Database configuration findings, and rows whose tenant does not exist. */
  readonly globalViolations: AuditFinding[];
  /** True when a check found more than `limitPerCheck` rows and the rest were left out. */
  readonly truncated: boolean;
}

export interface AuditOptions {
  /** Audit only this tenant (its id); all tenants when absent. */
  readonly tenantId?: string;
  /** The role the service runs as, checked for a way around row-level security. */
  readonly runtimeRole?: string;
  /** At most this many violations per check statement (default 1000). */
  readonly limitPerCheck?: number;
}

/** A tenant found by slug, for scoping the audit. */
export async function findTenantForAudit(trx: Knex.Transaction, slug: string): Promise<{ id: string } | null> {
  const row = (await trx('tenants').where({ slug }).first('id')) as { id: string } | undefined;
  return row ?? null;
}

interface FoundRow {
  tenant_id: string;
  check: AuditCheck;
  table: string;
  row_id: string;
  message: string;
}

/** How each table names one of its rows (board_members has no id of its own). */
const ROW_ID: Record<TenantTable, string> = {
  users: 'r.id::text',
  boards: 'r.id::text',
  board_members: "r.board_id::text || ':' || r.user_id::text",
  generations: 'r.id::text',
  provider_configs: 'r.id::text',
  credit_transactions: 'r.id::text',
};

/** Columns that reference a user (cross-tenant user access). */
const USER_REFERENCES: ReadonlyArray<{ table: TenantTable; column: string }> = [
  { table: 'board_members', column: 'user_id' },
  { table: 'boards', column: 'created_by' },
  { table: 'credit_transactions', column: 'user_id' },
];

/** Every composite foreign key to a parent in the same tenant (orphaned records). */
const PARENTS: ReadonlyArray<{ table: TenantTable; column: string; parent: 'users' | 'boards'; noun: string }> = [
  { table: 'generations', column: 'board_id', parent: 'boards', noun: 'board' },
  { table: 'board_members', column: 'board_id', parent: 'boards', noun: 'board' },
  { table: 'board_members', column: 'user_id', parent: 'users', noun: 'user' },
  { table: 'boards', column: 'created_by', parent: 'users', noun: 'user' },
  { table: 'credit_transactions', column: 'user_id', parent: 'users', noun: 'user' },
];

const DEFAULT_LIMIT = 1000;

/**
 * Runs every check and counts every tenant's rows. `trx` must see all tenants (the reader role
 * of `withPlatformRead`, or a superuser); it is only read from.
 */
export async function auditTenants(trx: Knex.Transaction, opts: AuditOptions = {}): Promise<AuditResult> {
  const limit = opts.limitPerCheck ?? DEFAULT_LIMIT;
  const scoped = opts.tenantId ?? null;
  // Each statement's bindings: the scope id once per sub-select that uses it.
  const scope = (alias: string) => (scoped ? `and ${alias}.tenant_id = ?` : '');
  const binds = (n: number) => (scoped ? Array<string>(n).fill(scoped) : []);
  let truncated = false;

  const run = async (parts: string[]): Promise<FoundRow[]> => {
    if (!parts.length) return [];
    // Each part is capped on its own, so one flooded table cannot hide the others.
    const sql = parts.map((p, i) => `select ${i} as part, x.* from (${p} limit ${limit + 1}) x`).join('\nunion all\n');
    const rows = (await trx.raw(sql, binds(parts.length))).rows as Array<FoundRow & { part: number }>;
    const counts = new Map<number, number>();
    return rows.filter((r) => {
      const n = (counts.get(r.part) ?? 0) + 1;
      counts.set(r.part, n);
      if (n > limit) truncated = true;
      return n <= limit;
    });
  };
  const tenants = (await trx('tenants')
    .modify((q) => {
      if (scoped) q.where({ id: scoped });
    })
    .orderBy([{ column: 'created_at' }, { column: 'id' }])
    .select('id', 'slug', 'name')) as Array<{ id: string; slug: string; name: string }>;

  // Statistics: one COUNT … GROUP BY tenant_id per table, in one round trip. Cost: one index-only
  // (or sequential) scan per table, O(N); for one tenant an index range scan on its tenant_id.
  const stats = (
    await trx.raw(
      TENANT_TABLES.map((t) => `select tenant_id, '${t}' as tbl, count(*)::bigint as n from ${t} r where true ${scope('r')} group by tenant_id`).join(
        '\nunion all\n',
      ),
      binds(TENANT_TABLES.length),
    )
  ).rows as Array<{ tenant_id: string; tbl: TenantTable; n: string }>;

  // Cross-tenant user access: the referenced user id is not a user of the row's tenant but is a
  // user of another. Cost: a hash anti-join against users' primary key plus a hash join on
  // users.id, O(N + M).
  const crossTenant = await run(
    USER_REFERENCES.map(
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
    ),
  );

  // Orphaned records, part 1: rows whose tenant does not exist (impossible with the foreign
  // keys in place). Only in the all-tenant audit: a scoped tenant exists by definition.
  // Cost: a hash anti-join against tenants, O(N) per table.
  const noTenant = scoped
    ? []
    : await run(
        TENANT_TABLES.map(
          (table) => `
      select r.tenant_id, 'orphaned_record' as "check", '${table}' as "table", ${ROW_ID[table]} as row_id,
        format('%s row %s belongs to tenant %s, which does not exist.', '${table}', ${ROW_ID[table]}, r.tenant_id) as message
      from ${table} r
      where not exists (select 1 from tenants t where t.id = r.tenant_id)
      order by r.tenant_id, ${ROW_ID[table]}`,
        ),
      );

  // Orphaned records, part 2: the parent named by a composite foreign key is not in the row's
  // own tenant: it is in another tenant, or gone. Cost: a hash anti-join on the parent's
  // primary key, plus a hash join on parent id for the (normally empty) survivors, O(N + M).
  const orphans = await run(
    PARENTS.map(
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
    ),
  );

  // Board membership: the member must be a user of the board's tenant. The board's tenant is the
  // row's own when the board is there (the normal case: one anti-join on users, O(N + M)), else
  // the tenant that holds a board with that id (hash join on boards.id for the survivors).
  const membership = await run([
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

  // Credit balances: balance_after must equal the running sum of amount in seq order per tenant.
  // A run of transactions off by the same amount (one wrong amount shifts every later balance)
  // is reported once, at its first transaction. Cost: one ordered scan of the
  // (tenant_id, seq) index feeding two window passes with the same ordering: no sort, O(N).
  const balances = await run([
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

  const globalViolations: AuditFinding[] = [];

  // Row-level security on every tenant table: enabled, forced (so even the owner is confined)
  // and with a policy. Catalog lookups, constant cost.
  const rls = (
    await trx.raw(
      `select t.name, c.oid is not null as present, coalesce(c.relrowsecurity, false) as enabled,
          coalesce(c.relforcerowsecurity, false) as forced,
          exists (select 1 from pg_policy p where p.polrelid = c.oid) as has_policy
       from unnest(array[${TENANT_TABLES.map((t) => `'${t}'`).join(', ')}]) with ordinality as t(name, n)
       left join pg_class c on c.oid = to_regclass(t.name)
       order by t.n`,
    )
  ).rows as Array<{ name: string; present: boolean; enabled: boolean; forced: boolean; has_policy: boolean }>;
  for (const t of rls) {
    const problems = !t.present
      ? ['the table is missing']
      : [
          ...(t.enabled ? [] : ['row-level security is not enabled']),
          ...(t.forced ? [] : ['row-level security is not forced']),
          ...(t.has_policy ? [] : ['it has no row-level security policy']),
        ];
    if (problems.length) {
      globalViolations.push({ check: 'data_consistency', table: t.name, rowId: null, message: `Tenant table ${t.name}: ${problems.join('; ')}.` });
    }
  }

  // The runtime role must not bypass row-level security, neither itself nor through a role it
  // may SET ROLE to. Catalog lookup over pg_roles, constant cost.
  const runtimeRole = opts.runtimeRole ?? APP_ROLE;
  const roles = (
    await trx.raw(
      `select r.rolname, r.rolsuper, r.rolbypassrls
       from pg_roles me
       join pg_roles r on pg_has_role(me.oid, r.oid, 'MEMBER')
       where me.rolname = ? and (r.rolsuper or r.rolbypassrls)
       order by r.rolname`,
      [runtimeRole],
    )
  ).rows as Array<{ rolname: string; rolsuper: boolean; rolbypassrls: boolean }>;
  for (const r of roles) {
    const power = r.rolsuper ? 'is a superuser' : 'has BYPASSRLS';
    const message =
      r.rolname === runtimeRole
        ? `The runtime role ${runtimeRole} ${power}, so row-level security does not confine it.`
        : `The runtime role ${runtimeRole} is a member of ${r.rolname}, which ${power}, so it can bypass row-level security with SET ROLE.`;
    globalViolations.push({ check: 'data_consistency', table: 'pg_roles', rowId: r.rolname, message });
  }

  // Assemble per tenant, in check order; rows of a tenant that does not exist are global.
  const byTenant = new Map<string, TenantAuditResult>();
  for (const t of tenants) {
    const statistics = Object.fromEntries(TENANT_TABLES.map((name) => [name, 0])) as Record<TenantTable, number>;
    byTenant.set(t.id, { tenantId: t.id, slug: t.slug, name: t.name, statistics, violations: [] });
  }
  for (const s of stats) {
    const t = byTenant.get(s.tenant_id);
    if (t) t.statistics[s.tbl] = Number(s.n);
  }
  for (const f of [...crossTenant, ...noTenant, ...orphans, ...membership, ...balances]) {
    const finding: AuditFinding = { check: f.check, table: f.table, rowId: f.row_id, message: f.message };
    const t = byTenant.get(f.tenant_id);
    if (t) t.violations.push(finding);
    else if (!scoped) globalViolations.push(finding);
  }
  for (const t of byTenant.values()) t.violations.sort(byCheckTableRow);
  return { tenants: [...byTenant.values()], globalViolations, truncated };
}

const CHECK_ORDER: readonly AuditCheck[] = ['cross_tenant_user_access', 'orphaned_record', 'board_membership_violation', 'data_consistency'];

/** A stable order for a report: check, then table, then row id (UNION ALL promises none). */
function byCheckTableRow(a: AuditFinding, b: AuditFinding): number {
  return (
    CHECK_ORDER.indexOf(a.check) - CHECK_ORDER.indexOf(b.check) ||
    a.table.localeCompare(b.table) ||
    (a.rowId ?? '').localeCompare(b.rowId ?? '')
  );
}

/**
 * The audit as the API runs it: in a read-only transaction under the reader role (it sees every
 * tenant's rows and can change nothing), for every tenant or the one with `tenantSlug`
 * (404 `Tenant not found` when there is none).
 */
export async function auditIsolation(db: Knex, tenantSlug?: string): Promise<AuditResult> {
  return withPlatformRead(db, async (trx) => {
    let tenantId: string | undefined;
    if (tenantSlug !== undefined) {
      const tenant = await findTenantForAudit(trx, tenantSlug);
      if (!tenant) throw new ApiError('tenantNotFound', `No tenant has the slug '${tenantSlug}'.`);
      tenantId = tenant.id;
    }
    return auditTenants(trx, { tenantId });
  });
}
