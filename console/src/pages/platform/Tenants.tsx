/**
 * Platform admins: every tenant, 100 per page, searched by name or slug (`?q=` in the address, so
 * reload and back keep it), with the number of matches, cursor paging, a mark on tenants waiting
 * for approval and an Approve button beside them.
 * Operations: listTenants, updateTenant (status active = approve).
 */
import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useId, useState } from 'react';
import { listTenantsOptions, updateTenantMutation } from '@generated/@tanstack/react-query.gen';
import type { Tenant } from '@generated/types.gen';
import { ErrorNotice, SuccessNotice } from '../../components/ErrorNotice';
import { Loading, Page } from '../../components/Page';
import { Pager, useCursorPager } from '../../components/Pager';
import { Time } from '../../components/Time';
import { takeFlash } from '../../components/platform/flash';
import { invalidateTenantReads, statusLabel } from '../../components/platform/tenant-forms';
import { Link, navigate, useLocation } from '../../router';
import { count } from '../../components/RowCountTable';

const PAGE_SIZE = 100;

function SearchForm({ q }: { q: string }) {
  const id = useId();
  const [text, setText] = useState(q);
  return (
    <form
      role="search"
      className="form-row"
      onSubmit={(e) => {
        e.preventDefault();
        const t = text.trim();
        navigate(t ? `/admin/tenants?${new URLSearchParams({ q: t }).toString()}` : '/admin/tenants');
      }}
    >
      <div className="field">
        <label htmlFor={id}>Search tenants</label>
        <input id={id} type="search" value={text} maxLength={255} onChange={(e) => setText(e.target.value)} aria-describedby={`${id}-hint`} />
        <span className="hint" id={`${id}-hint`}>
          Part of a name or slug, any case.
        </span>
      </div>
      <button type="submit">Search</button>
      {q ? (
        <button type="button" onClick={() => navigate('/admin/tenants')}>
          Clear the search
        </button>
      ) : null}
    </form>
  );
}

function ApproveButton({ tenant, onApproved }: { tenant: Tenant; onApproved: (name: string) => void }) {
  const queryClient = useQueryClient();
  const approve = useMutation({
    ...updateTenantMutation(),
    onSuccess: async (t) => {
      onApproved(t.name);
      await invalidateTenantReads(queryClient);
    },
  });
  return (
    <>
      <button type="button" className="primary" disabled={approve.isPending} aria-label={`Approve ${tenant.name}`} onClick={() => approve.mutate({ path: { tenant_id: tenant.tenant_id }, body: { status: 'active' } })}>
        {approve.isPending ? 'Approving…' : 'Approve'}
      </button>
      <ErrorNotice error={approve.error} title={`Approving ${tenant.name} failed`} />
    </>
  );
}

function TenantTable({ q }: { q: string }) {
  const pager = useCursorPager();
  const [approved, setApproved] = useState<string | null>(null);
  const list = useQuery({
    ...listTenantsOptions({ query: { limit: PAGE_SIZE, ...(q ? { q } : {}), ...(pager.cursor ? { cursor: pager.cursor } : {}) } }),
    placeholderData: keepPreviousData,
  });
  const data = list.data;
  const first = (pager.page - 1) * PAGE_SIZE + 1;
  const summary = list.isPlaceholderData
    ? 'loading…'
    : data
    ? data.total_count === 0
      ? 'no tenant'
      : `tenants ${count.format(first)}–${count.format(first + data.tenants.length - 1)} of ${count.format(data.total_count)}`
    : undefined;
  return (
    <>
      {approved ? <SuccessNotice>Tenant {approved} approved: its members can use it now.</SuccessNotice> : null}
      {list.isPending ? <Loading what="tenants" /> : null}
      <ErrorNotice error={list.error} />
      {data ? (
        <>
          <p>
            {q ? (
              <>
                <strong>{count.format(data.total_count)}</strong> {data.total_count === 1 ? 'tenant matches' : 'tenants match'} “{q}”.
              </>
            ) : (
              <>
                <strong>{count.format(data.total_count)}</strong> {data.total_count === 1 ? 'tenant' : 'tenants'} in all.
              </>
            )}
          </p>
          {data.tenants.length ? (
            <table aria-busy={list.isPlaceholderData}>
              <caption className="visually-hidden">Tenants</caption>
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">Slug</th>
                  <th scope="col">Status</th>
                  <th scope="col">Created</th>
                </tr>
              </thead>
              <tbody>
                {data.tenants.map((t) => (
                  <tr key={t.tenant_id}>
                    <td>
                      <Link to={`/admin/tenants/${t.tenant_id}`}>{t.name}</Link>
                    </td>
                    <td>
                      <code>{t.slug}</code>
                    </td>
                    <td>
                      {t.status === 'pending_approval' ? (
                        <div className="status-pending">
                          <strong>{statusLabel(t.status)}</strong> <ApproveButton tenant={t} onApproved={setApproved} />
                        </div>
                      ) : (
                        statusLabel(t.status)
                      )}
                    </td>
                    <td>
                      <Time value={t.created_at} />
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          ) : (
            <p>{q ? 'No tenant has this text in its name or slug.' : 'There is no tenant yet.'}</p>
          )}
          <Pager label="Tenant pages" page={pager.page} nextCursor={data.next_cursor} onNext={pager.next} onPrevious={pager.previous} summary={summary} />
        </>
      ) : null}
    </>
  );
}

export default function Tenants() {
  const loc = useLocation();
  const q = (loc.query.get('q') ?? '').trim();
  const [flash] = useState(takeFlash);
  return (
    <Page
      title="All tenants"
      actions={
        <Link to="/admin/tenants/new" className="button primary">
          Create a tenant
        </Link>
      }
    >
      <SuccessNotice>{flash}</SuccessNotice>
      {/* Keyed by the search: a new search starts again at page 1 with the box showing it. */}
      <SearchForm key={`form:${q}`} q={q} />
      <TenantTable key={`table:${q}`} q={q} />
    </Page>
  );
}
