/**
 * The isolation audit (docs/security.md#audit): runs the checks of src/db/queries/audit.ts
 * (set-based SQL, one named function per check) and assembles their findings per tenant.
 */
import { findTenantIdBySlug, auditedTenants, countRowsPerTenant, findBoardMembershipViolations, findCreditBalanceMismatches, findCrossTenantUserAccess, findOrphanedRecords, findRowSecurityBypassRoles, findRowsWithoutTenant, readRowSecurityState, type AuditCheck, type AuditScope, type AuditViolation } from '../db/queries/audit';
import { APP_ROLE, TENANT_TABLES, type TenantTable } from '../db/schema';
import { withPlatformRead, type Database, type Transaction } from '../db/tenant-scope';
import { ApiError } from '../errors';

export type { AuditCheck } from '../db/queries/audit';

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
export async function findTenantForAudit(trx: Transaction, slug: string): Promise<{ id: string } | null> {
  return findTenantIdBySlug(trx, slug);
}

const DEFAULT_LIMIT = 1000;

/**
 * Runs every check and counts every tenant's rows. `trx` must see all tenants (the reader role
 * of `withPlatformRead`, or a superuser); it is only read from.
 */
export async function auditTenants(trx: Transaction, opts: AuditOptions = {}): Promise<AuditResult> {
  const scoped = opts.tenantId ?? null;
  const scope: AuditScope = { tenantId: scoped, limit: opts.limitPerCheck ?? DEFAULT_LIMIT };
  const tenants = await auditedTenants(trx, scoped);
  const stats = await countRowsPerTenant(trx, scoped);
  const checks = [
    await findCrossTenantUserAccess(trx, scope),
    await findRowsWithoutTenant(trx, scope),
    await findOrphanedRecords(trx, scope),
    await findBoardMembershipViolations(trx, scope),
    await findCreditBalanceMismatches(trx, scope),
  ];
  const truncated = checks.some((c) => c.truncated);
  const found: AuditViolation[] = checks.flatMap((c) => c.rows);

  const globalViolations: AuditFinding[] = [];
  for (const t of await readRowSecurityState(trx)) {
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
  // may SET ROLE to.
  const runtimeRole = opts.runtimeRole ?? APP_ROLE;
  const roles = await findRowSecurityBypassRoles(trx, runtimeRole);
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
  for (const f of found) {
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
export async function auditIsolation(db: Database, tenantSlug?: string): Promise<AuditResult> {
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
