/**
 * Tag `audit`: the cross-tenant isolation audit (platform admins only).
 */
import type { AuditTenantsData, AuditTenantsErrors, AuditTenantsResponses, AuditViolation } from '../../generated/types.gen';
import { auditIsolation, type AuditFinding } from '../domain/audit';
import { authenticated, type HandlerInput, type Reply } from './types';

const toViolation = (f: AuditFinding): AuditViolation => ({ check: f.check, table: f.table, row_id: f.rowId, message: f.message });

/** GET /api/setup/audit: every tenant, or the one named by `tenant_slug` (404 when unknown). */
export const auditTenants = authenticated(
  async (ctx, input: HandlerInput<AuditTenantsData>): Promise<Reply<AuditTenantsResponses & AuditTenantsErrors>> => {
    const slug = input.query.tenant_slug;
    const result = await auditIsolation(ctx.services.db, slug);
    const tenants = result.tenants.map((t) => ({
      tenant_id: t.tenantId,
      slug: t.slug,
      name: t.name,
      statistics: { ...t.statistics },
      violations: t.violations.map(toViolation),
    }));
    const globalViolations = result.globalViolations.map(toViolation);
    const total = globalViolations.length + tenants.reduce((n, t) => n + t.violations.length, 0);
    const summary = { tenant_slug: slug ?? null, tenants: tenants.length, total_violations: total, truncated: result.truncated };
    // Violations are something an operator must look at (docs/operations.md#metrics-and-logs): warn, not info.
    if (total > 0) ctx.log.warn(summary, 'Isolation audit found violations');
    else ctx.log.info(summary, 'Isolation audit finished');
    return {
      status: 200,
      body: { generated_at: new Date().toISOString(), total_violations: total, truncated: result.truncated, tenants, global_violations: globalViolations },
    };
  },
);
