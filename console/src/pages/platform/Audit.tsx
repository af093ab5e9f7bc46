/**
 * Platform admins: the isolation audit, of every tenant or of one (`?tenant_slug=` in the
 * address). Shows the violations (the database's and each tenant's) and the rows per table.
 * Operations: auditTenants.
 */
import { useQuery } from '@tanstack/react-query';
import { useId, useState } from 'react';
import { auditTenantsOptions } from '@generated/@tanstack/react-query.gen';
import type { AuditReport, AuditViolation } from '@generated/types.gen';
import { ErrorNotice } from '../../components/ErrorNotice';
import { Loading, Page } from '../../components/Page';
import { Time } from '../../components/Time';
import { slugProblem } from '../../components/platform/tenant-forms';
import { Link, navigate, useLocation } from '../../router';
import { count, RowCountTable } from '../../components/RowCountTable';


const CHECKS: Record<AuditViolation['check'], string> = {
  cross_tenant_user_access: 'Cross-tenant user access',
  orphaned_record: 'Orphaned record',
  board_membership_violation: 'Board membership violation',
  data_consistency: 'Data consistency',
};

function FilterForm({ slug }: { slug: string }) {
  const id = useId();
  const [text, setText] = useState(slug);
  const [problem, setProblem] = useState<string | null>(null);
  return (
    <form
      className="form-row"
      onSubmit={(e) => {
        e.preventDefault();
        const s = text.trim();
        const p = s ? slugProblem(s) : null;
        setProblem(p);
        if (!p) navigate(s ? `/admin/audit?${new URLSearchParams({ tenant_slug: s }).toString()}` : '/admin/audit');
      }}
    >
      <div className="field">
        <label htmlFor={id}>Tenant slug</label>
        <input id={id} value={text} onChange={(e) => setText(e.target.value)} spellCheck={false} aria-describedby={`${id}-hint`} />
        <span className="hint" id={`${id}-hint`}>
          Empty: audit every tenant.
        </span>
      </div>
      <button type="submit">Run the audit</button>
      {problem ? (
        <p className="notice notice-error" role="alert">
          {problem}
        </p>
      ) : null}
    </form>
  );
}

function ViolationRows({ items, tenant }: { items: AuditViolation[]; tenant: string }) {
  return (
    <>
      {items.map((v, i) => (
        <tr key={`${tenant}:${i}`}>
          <td>{tenant}</td>
          <td>{CHECKS[v.check] ?? v.check}</td>
          <td>
            <code>{v.table}</code>
          </td>
          <td>{v.row_id ? <code>{v.row_id}</code> : '—'}</td>
          <td>{v.message}</td>
        </tr>
      ))}
    </>
  );
}

function Report({ r }: { r: AuditReport }) {
  const withViolations = r.tenants.filter((t) => t.violations.length);
  const totals = new Map<string, number>();
  for (const t of r.tenants) for (const [table, n] of Object.entries(t.statistics)) totals.set(table, (totals.get(table) ?? 0) + n);
  const one = r.tenants.length === 1 ? r.tenants[0] : null;
  return (
    <>
      <div className={r.total_violations ? 'notice notice-error' : 'notice notice-ok'} role="status">
        <p>
          {r.total_violations === 0
            ? `No isolation violation in ${count.format(r.tenants.length)} ${r.tenants.length === 1 ? 'tenant' : 'tenants'}.`
            : `${count.format(r.total_violations)} ${r.total_violations === 1 ? 'violation' : 'violations'} found in ${count.format(r.tenants.length)} ${r.tenants.length === 1 ? 'tenant' : 'tenants'}.`}
          {r.truncated ? ' A check found more than 1 000 violations in one table: only the first 1 000 are listed.' : ''}
        </p>
        <p>
          Audited <Time value={r.generated_at} />.
        </p>
      </div>
      {r.total_violations ? (
        <table>
          <caption>Violations</caption>
          <thead>
            <tr>
              <th scope="col">Tenant</th>
              <th scope="col">Check</th>
              <th scope="col">Table</th>
              <th scope="col">Row</th>
              <th scope="col">What is wrong</th>
            </tr>
          </thead>
          <tbody>
            <ViolationRows items={r.global_violations} tenant="(none: database or missing tenant)" />
            {withViolations.map((t) => (
              <ViolationRows key={t.tenant_id} items={t.violations} tenant={t.slug} />
            ))}
          </tbody>
        </table>
      ) : null}
      <RowCountTable caption={one ? `Rows per table of ${one.name}` : `Rows per table, all ${count.format(r.tenants.length)} tenants`} rows={totals.entries()} />
      {one ? (
        <p>
          <Link to={`/admin/tenants/${one.tenant_id}`}>Open {one.name}</Link>
        </p>
      ) : null}
    </>
  );
}

export default function Audit() {
  const loc = useLocation();
  const slug = (loc.query.get('tenant_slug') ?? '').trim();
  const q = useQuery({ ...auditTenantsOptions({ query: slug ? { tenant_slug: slug } : {} }), staleTime: 0 });
  return (
    <Page title="Isolation audit">
      <p>Checks that no row reaches across tenants: users of one tenant in another&apos;s boards, orphaned rows, inconsistent balances, and the database&apos;s own row-level security.</p>
      <FilterForm key={slug} slug={slug} />
      {q.isPending ? <Loading what="the audit" /> : null}
      <ErrorNotice error={q.error} title="The audit failed" />
      {q.data ? <Report r={q.data} /> : null}
    </Page>
  );
}
