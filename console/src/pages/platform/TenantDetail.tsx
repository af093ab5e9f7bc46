/**
 * Platform admins: one tenant. Its facts; Approve when it waits for approval; forms for its
 * details (name, slug, status, settings), membership policy and identity links; its lifecycle
 * (suspension, scheduled deletion, export); and its deletion (preview, typed confirmation, delete).
 * Operations: getTenant, updateTenant, getTenantDeletionPreview, deleteTenant and TenantLifecycle's.
 */
import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { getTenantOptions } from '@generated/@tanstack/react-query.gen';
import { ErrorNotice, SuccessNotice } from '../../components/ErrorNotice';
import { Loading, Page } from '../../components/Page';
import { Time } from '../../components/Time';
import { DeleteTenant } from '../../components/platform/DeleteTenant';
import { TenantLifecycle } from '../../components/platform/TenantLifecycle';
import { takeFlash } from '../../components/platform/flash';
import { statusLabel } from '../../components/platform/tenant-forms';
import { ApproveNotice, DetailsForm, LinksForm, PolicyForm } from '../../components/platform/TenantEditForms';
import { Link } from '../../router';

export default function TenantDetail({ params }: { params: Record<string, string> }) {
  const tenantId = params.id ?? '';
  const [flash] = useState(takeFlash);
  const q = useQuery(getTenantOptions({ path: { tenant_id: tenantId } }));
  const t = q.data;
  return (
    <Page title={t ? `Tenant ${t.name}` : 'Tenant details'}>
      <p>
        <Link to="/admin/tenants">Back to all tenants</Link>
      </p>
      <SuccessNotice>{flash}</SuccessNotice>
      {q.isPending ? <Loading what="the tenant" /> : null}
      <ErrorNotice error={q.error} title="The tenant could not be read" />
      {t ? (
        <>
          <dl className="facts">
            <dt>Slug</dt>
            <dd>
              <code>{t.slug}</code>
            </dd>
            <dt>Status</dt>
            <dd>{statusLabel(t.status)}</dd>
            <dt>Tenant ID</dt>
            <dd>
              <code>{t.tenant_id}</code>
            </dd>
            <dt>Created</dt>
            <dd>
              <Time value={t.created_at} />
            </dd>
            <dt>Last changed</dt>
            <dd>
              <Time value={t.updated_at} />
            </dd>
            <dt>Events</dt>
            <dd>
              <Link to={`/admin/events?${new URLSearchParams({ tenant_id: t.tenant_id }).toString()}`}>This tenant&apos;s events</Link>
            </dd>
          </dl>
          <ApproveNotice tenant={t} />
          <DetailsForm tenant={t} />
          <PolicyForm tenant={t} />
          <LinksForm tenant={t} />
          <TenantLifecycle tenant={t} />
          <DeleteTenant tenant={t} />
        </>
      ) : null}
    </Page>
  );
}
