/**
 * `tenantctl tenant audit`: the isolation audit (GET /api/setup/audit); exit 0 clean, 1 violations found, 2 error.
 */
import type { Command } from 'commander';
import * as sdk from '../../generated/sdk.gen';
import type { AuditReport, AuditViolation } from '../../generated/types.gen';
import { call, connect, REQUEST_TIMEOUT_MS } from './api';
import type { CommandHelpers, Format } from './command';
import { CliError, EXIT_ERROR } from './errors';
import { renderTable, type Style } from './output';
import { parseSlug } from './tenant-flags';

/** Registers `audit` on the `tenant` command group. */
export function registerTenantAuditCommand(tenant: Command, h: CommandHelpers): void {
  const { globals, styles, formatOption, print, progress, setExitCode } = h;
  tenant
    .command('audit')
    .description('audit tenant isolation; exit 0 clean, 1 violations found, 2 error')
    .option('--tenant <slug>', 'audit only this tenant', parseSlug('--tenant'))
    .addOption(formatOption())
    .action(async (opts: { tenant?: string; format: Format }, cmd: Command) => {
      const conn = connect(globals(cmd));
      progress(`Auditing ${opts.tenant ? `tenant ${opts.tenant}` : 'all tenants'} at ${conn.baseUrl}…`);
      const report = await call(
        conn,
        'tenant audit',
        sdk.auditTenants({ client: conn.client, query: opts.tenant ? { tenant_slug: opts.tenant } : undefined, signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) }),
      ).catch((err: unknown) => {
        // Exit 1 means "violations found" here, so every failure is 2.
        throw err instanceof CliError ? new CliError(err.message, EXIT_ERROR) : err;
      });
      if (opts.format === 'json') print(`${JSON.stringify(report, null, 2)}\n`);
      else print(renderAudit(report, styles(cmd).out));
      setExitCode(report.total_violations > 0 ? 1 : 0);
    });
}

function renderAudit(report: AuditReport, style: Style): string {
  const parts: string[] = [];
  parts.push(
    renderTable(
      report.tenants,
      [
        { header: 'TENANT', value: (t) => t.slug },
        { header: 'USERS', value: (t) => String(t.statistics.users ?? 0), right: true },
        { header: 'BOARDS', value: (t) => String(t.statistics.boards ?? 0), right: true },
        { header: 'MEMBERS', value: (t) => String(t.statistics.board_members ?? 0), right: true },
        { header: 'GENERATIONS', value: (t) => String(t.statistics.generations ?? 0), right: true },
        { header: 'PROVIDERS', value: (t) => String(t.statistics.provider_configs ?? 0), right: true },
        { header: 'CREDIT TXNS', value: (t) => String(t.statistics.credit_transactions ?? 0), right: true },
        { header: 'VIOLATIONS', value: (t) => String(t.violations.length), right: true },
      ],
      style,
    ),
  );
  const rows: Array<AuditViolation & { tenant: string }> = [
    ...report.global_violations.map((v) => ({ ...v, tenant: '(global)' })),
    ...report.tenants.flatMap((t) => t.violations.map((v) => ({ ...v, tenant: t.slug }))),
  ];
  if (rows.length) {
    parts.push(
      '\n' +
        renderTable(
          rows,
          [
            { header: 'TENANT', value: (v) => v.tenant },
            { header: 'CHECK', value: (v) => v.check },
            { header: 'TABLE', value: (v) => v.table },
            { header: 'ROW', value: (v) => v.row_id ?? '-' },
            { header: 'MESSAGE', value: (v) => v.message },
          ],
          style,
        ),
    );
  }
  const n = report.total_violations;
  const scope = `${report.tenants.length} tenant${report.tenants.length === 1 ? '' : 's'}`;
  parts.push('\n' + (n === 0 ? style.green(`No isolation violations in ${scope}.`) : style.red(`${n} violation${n === 1 ? '' : 's'} found in ${scope}.`)) + '\n');
  if (report.truncated) parts.push('Some checks found more violations than listed (at most 1000 per check and table).\n');
  return parts.join('');
}
