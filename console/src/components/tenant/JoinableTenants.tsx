/**
 * Tenants the signed-in person may join by their verified email's domain (listJoinableTenants,
 * docs/domains.md#joining-by-domain), each with a Join button (joinTenant). Shows nothing when
 * there are none.
 */
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { joinTenantMutation, listJoinableTenantsOptions } from '@generated/@tanstack/react-query.gen';
import { ErrorNotice, SuccessNotice } from '../ErrorNotice';
import { invalidateOperations } from './queries';
import { useState } from 'react';

export function JoinableTenants() {
  const queryClient = useQueryClient();
  const [joined, setJoined] = useState<string | null>(null);
  const list = useQuery({ ...listJoinableTenantsOptions(), retry: false });
  const join = useMutation({
    ...joinTenantMutation(),
    onSuccess: async (j) => {
      setJoined(`You joined ${j.slug} as ${j.role}.`);
      await invalidateOperations(queryClient, 'listMyTenants', 'listJoinableTenants');
    },
  });
  const tenants = list.data?.tenants ?? [];
  return (
    <>
      <SuccessNotice>{joined}</SuccessNotice>
      <ErrorNotice error={join.error} title="Not joined" />
      {tenants.length ? (
        <section aria-labelledby="joinable-h">
          <h2 id="joinable-h">Tenants you can join</h2>
          <p className="hint">These organizations verified the domain of your email address and let people there join.</p>
          <table>
            <caption className="visually-hidden">Tenants you can join</caption>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Domain</th>
                <th scope="col">Your role</th>
                <th scope="col">
                  <span className="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {tenants.map((t) => (
                <tr key={t.tenant_id}>
                  <td>{t.name}</td>
                  <td>{t.domain}</td>
                  <td>{t.join_role}</td>
                  <td>
                    <button type="button" aria-label={`Join ${t.name}`} disabled={join.isPending} onClick={() => join.mutate({ path: { tenant_id: t.tenant_id } })}>
                      Join
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </section>
      ) : null}
    </>
  );
}
