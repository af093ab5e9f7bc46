/**
 * Deleting a tenant, in three steps: the deletion preview (rows per table that would go), then a
 * confirmation dialog where the tenant's slug must be typed, then the delete. Afterwards the list
 * of tenants opens with a notice saying what was deleted.
 */
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { deleteTenantMutation, getTenantDeletionPreviewOptions } from '@generated/@tanstack/react-query.gen';
import type { Tenant } from '@generated/types.gen';
import { ConfirmDialog } from '../ConfirmDialog';
import { ErrorNotice } from '../ErrorNotice';
import { Loading } from '../Page';
import { count, RowCountTable } from '../RowCountTable';
import { navigate } from '../../router';
import { setFlash } from './flash';
import { invalidateTenantReads } from './tenant-forms';
import { Section } from './TenantEditForms';

export function DeleteTenant({ tenant }: { tenant: Tenant }) {
  const queryClient = useQueryClient();
  const [previewing, setPreviewing] = useState(false);
  const [confirming, setConfirming] = useState(false);
  const preview = useQuery({ ...getTenantDeletionPreviewOptions({ path: { tenant_id: tenant.tenant_id } }), enabled: previewing, staleTime: 0 });
  const del = useMutation({
    ...deleteTenantMutation(),
    onSuccess: async () => {
      setConfirming(false);
      setFlash(`Tenant ${tenant.name} (${tenant.slug}) deleted, with all its rows.`);
      queryClient.removeQueries({ predicate: (q) => JSON.stringify(q.queryKey).includes(tenant.tenant_id) });
      await invalidateTenantReads(queryClient);
      navigate('/admin/tenants');
    },
  });
  const rows = preview.data ? Object.entries(preview.data.rows) : [];
  const total = rows.reduce((n, [, c]) => n + c, 0);
  return (
    <Section title="Delete this tenant">
      <p>Deleting a tenant removes it and every row it owns: members, boards, invitations and the rest. It cannot be undone.</p>
      {!previewing ? (
        <button type="button" onClick={() => setPreviewing(true)}>
          Preview the deletion
        </button>
      ) : null}
      {previewing && preview.isPending ? <Loading what="what would be deleted" /> : null}
      <ErrorNotice error={preview.error} title="The deletion preview failed" />
      {preview.data ? (
        <>
          <RowCountTable caption={`What deleting ${tenant.name} removes now`} rows={rows} total={total} />
          <p>
            <button type="button" className="danger" onClick={() => setConfirming(true)}>
              Delete tenant…
            </button>{' '}
            <button type="button" onClick={() => void preview.refetch()} disabled={preview.isFetching}>
              Count again
            </button>
          </p>
        </>
      ) : null}
      <ConfirmDialog
        open={confirming}
        title={`Delete ${tenant.name}?`}
        confirmLabel="Delete the tenant"
        typeToConfirm={tenant.slug}
        busy={del.isPending}
        onConfirm={() => del.mutate({ path: { tenant_id: tenant.tenant_id } })}
        onCancel={() => {
          setConfirming(false);
          del.reset();
        }}
      >
        <p>
          This deletes the tenant <strong>{tenant.name}</strong> and {count.format(total)} rows of its data, for good. Its members lose access at once.
        </p>
        <ErrorNotice error={del.error} title="The tenant was not deleted" />
      </ConfirmDialog>
    </Section>
  );
}
