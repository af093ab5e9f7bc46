/**
 * A tenant's lifecycle on its page (docs/operations.md#tenant-lifecycle): its state
 * (suspended since when and why, deletion scheduled for when), suspend with a reason and
 * reactivate, schedule a deletion after a grace period and cancel it, and download the export.
 * Operations: suspendTenant, reactivateTenant, scheduleTenantDeletion, cancelTenantDeletion,
 * exportTenant.
 */
import { useMutation, useQueryClient, type UseMutationOptions } from '@tanstack/react-query';
import { useId, useState, type FormEvent } from 'react';
import {
  cancelTenantDeletionMutation,
  getTenantQueryKey,
  reactivateTenantMutation,
  scheduleTenantDeletionMutation,
  suspendTenantMutation,
} from '@generated/@tanstack/react-query.gen';
import { exportTenant } from '@generated/sdk.gen';
import type { Error as ErrorBody, Tenant } from '@generated/types.gen';
import { ErrorNotice, SuccessNotice } from '../ErrorNotice';
import { Time } from '../Time';
import { invalidateTenantReads } from './tenant-forms';
import { Section } from './TenantEditForms';

/** After any lifecycle change: the page shows the tenant as answered, and every tenant read refreshes. */
function useLifecycleChange<V>(tenant: Tenant, mutation: UseMutationOptions<Tenant, ErrorBody, V>, done: (t: Tenant) => string) {
  const queryClient = useQueryClient();
  const [saved, setSaved] = useState<string | null>(null);
  const m = useMutation({
    ...mutation,
    onMutate: () => setSaved(null),
    onSuccess: async (t: Tenant) => {
      queryClient.setQueryData(getTenantQueryKey({ path: { tenant_id: tenant.tenant_id } }), t);
      setSaved(done(t));
      await invalidateTenantReads(queryClient);
    },
  });
  return { ...m, saved };
}

function Suspension({ tenant }: { tenant: Tenant }) {
  const id = useId();
  const [reason, setReason] = useState('');
  const [problem, setProblem] = useState<string | null>(null);
  const suspend = useLifecycleChange(tenant, suspendTenantMutation(), (t) => `Tenant ${t.name} suspended: every request to it is refused until it is reactivated.`);
  const reactivate = useLifecycleChange(tenant, reactivateTenantMutation(), (t) => `Tenant ${t.name} reactivated: its members can use it again.`);
  const path = { tenant_id: tenant.tenant_id };
  function submit(e: FormEvent) {
    e.preventDefault();
    const r = reason.trim();
    setProblem(r === '' ? 'Say why the tenant is suspended (its members never see it).' : r.length > 500 ? 'The reason may be at most 500 characters.' : null);
    if (r === '' || r.length > 500) return;
    suspend.mutate({ path, body: { reason: r } }, { onSuccess: () => setReason('') });
  }
  if (tenant.status === 'suspended') {
    return (
      <>
        <div className="notice notice-error">
          <p>
            <strong>Suspended</strong> since <Time value={tenant.suspended_at ?? tenant.updated_at} />: every request to this tenant is refused with
            403 Tenant suspended. Reason (platform admins only): {tenant.suspension_reason}
          </p>
        </div>
        <button type="button" className="primary" disabled={reactivate.isPending} onClick={() => reactivate.mutate({ path })}>
          {reactivate.isPending ? 'Reactivating…' : 'Reactivate this tenant'}
        </button>
        <ErrorNotice error={reactivate.error} title="The tenant was not reactivated" />
        <SuccessNotice>{suspend.saved}</SuccessNotice>
      </>
    );
  }
  if (tenant.status !== 'active') return <SuccessNotice>{reactivate.saved}</SuccessNotice>;
  return (
    <form onSubmit={submit} noValidate>
      <p>A suspended tenant keeps its data; its members, tokens and invitations are refused until you reactivate it.</p>
      {problem ? (
        <div className="notice notice-error" role="alert">
          <p>{problem}</p>
        </div>
      ) : null}
      <div className="field">
        <label htmlFor={`${id}-reason`}>Reason for the suspension</label>
        <input id={`${id}-reason`} value={reason} maxLength={500} onChange={(e) => setReason(e.target.value)} aria-describedby={`${id}-reason-hint`} />
        <span className="hint" id={`${id}-reason-hint`}>
          For platform admins only, e.g. “Invoice 2026-10 unpaid”.
        </span>
      </div>
      <button type="submit" className="danger" disabled={suspend.isPending}>
        {suspend.isPending ? 'Suspending…' : 'Suspend this tenant'}
      </button>
      <ErrorNotice error={suspend.error} title="The tenant was not suspended" />
      <SuccessNotice>{reactivate.saved}</SuccessNotice>
    </form>
  );
}

function ScheduledDeletion({ tenant }: { tenant: Tenant }) {
  const id = useId();
  const [days, setDays] = useState('30');
  const schedule = useLifecycleChange(tenant, scheduleTenantDeletionMutation(), (t) => `Tenant ${t.name} will be deleted after ${t.delete_after ?? 'its grace period'}.`);
  const cancel = useLifecycleChange(tenant, cancelTenantDeletionMutation(), (t) => `The deletion of ${t.name} is cancelled; it is ${t.status} again.`);
  const path = { tenant_id: tenant.tenant_id };
  const n = Number(days);
  const valid = Number.isInteger(n) && n >= 1 && n <= 90;
  if (tenant.status === 'pending_deletion') {
    return (
      <>
        <div className="notice notice-error">
          <p>
            <strong>Scheduled for deletion</strong> after <Time value={tenant.delete_after ?? tenant.updated_at} />. Until then it is refused like a
            suspended tenant; export it now if its owner wants their data.
          </p>
        </div>
        <button type="button" className="primary" disabled={cancel.isPending} onClick={() => cancel.mutate({ path })}>
          {cancel.isPending ? 'Cancelling…' : 'Cancel the deletion'}
        </button>
        <ErrorNotice error={cancel.error} title="The deletion was not cancelled" />
        <SuccessNotice>{schedule.saved}</SuccessNotice>
      </>
    );
  }
  return (
    <form
      onSubmit={(e) => {
        e.preventDefault();
        if (valid) schedule.mutate({ path, body: { grace_days: n } });
      }}
      noValidate
    >
      <div className="field">
        <label htmlFor={`${id}-days`}>Grace period in days (1–90)</label>
        <input id={`${id}-days`} type="number" min={1} max={90} value={days} onChange={(e) => setDays(e.target.value)} aria-invalid={!valid} />
      </div>
      {!valid ? (
        <div className="notice notice-error" role="alert">
          <p>Enter a whole number of days from 1 to 90.</p>
        </div>
      ) : null}
      <button type="submit" className="danger" disabled={schedule.isPending || !valid}>
        {schedule.isPending ? 'Scheduling…' : 'Schedule the deletion'}
      </button>
      <ErrorNotice error={schedule.error} title="The deletion was not scheduled" />
      <SuccessNotice>{cancel.saved}</SuccessNotice>
    </form>
  );
}

function ExportDownload({ tenant }: { tenant: Tenant }) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  async function download() {
    setBusy(true);
    setError(null);
    try {
      const r = await exportTenant({ path: { tenant_id: tenant.tenant_id }, parseAs: 'blob' });
      // The client's error interceptor already made any failure a readable problem.
      const file = r.data as unknown;
      if (r.error !== undefined || !(file instanceof Blob)) {
        setError(r.error ?? new Error('The service answered without a file.'));
        return;
      }
      const url = URL.createObjectURL(file);
      const a = document.createElement('a');
      a.href = url;
      a.download = `tenant-${tenant.slug}.ndjson`;
      document.body.append(a);
      a.click();
      a.remove();
      setTimeout(() => URL.revokeObjectURL(url), 60_000);
    } finally {
      setBusy(false);
    }
  }
  return (
    <>
      <p>Every row of the tenant as newline-delimited JSON, to import on another deployment (tenantctl streams large tenants better).</p>
      <button type="button" disabled={busy} onClick={() => void download()}>
        {busy ? 'Exporting…' : 'Download the export'}
      </button>
      <ErrorNotice error={error} title="The export failed" />
    </>
  );
}

export function TenantLifecycle({ tenant }: { tenant: Tenant }) {
  return (
    <>
      <Section title="Suspension">
        <Suspension tenant={tenant} />
      </Section>
      <Section title="Scheduled deletion">
        <ScheduledDeletion tenant={tenant} />
      </Section>
      <Section title="Export">
        <ExportDownload tenant={tenant} />
      </Section>
    </>
  );
}
