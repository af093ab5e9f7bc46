/**
 * /tenant/roles (tenant admins, and platform admins with the tenant chosen): every role a member
 * of this tenant can be given — the platform roles and the tenant's own, with what each allows —
 * and creating or deleting the tenant's own (listTenantRoles, createTenantRole, deleteTenantRole).
 */
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { createTenantRoleMutation, deleteTenantRoleMutation, listTenantRolesOptions } from '@generated/@tanstack/react-query.gen';
import { ErrorNotice, SuccessNotice } from '../../components/ErrorNotice';
import { Loading, Page } from '../../components/Page';
import { CreateRoleForm, RolesTable } from '../../components/roles/RoleViews';
import { invalidateOperations } from '../../components/tenant/queries';
import { useSession } from '../../session';

export default function TenantRoles() {
  const s = useSession();
  const queryClient = useQueryClient();
  const list = useQuery(listTenantRolesOptions({ headers: s.tenantHeaders }));
  const [done, setDone] = useState<string | null>(null);
  const refresh = () => invalidateOperations(queryClient, 'listTenantRoles', 'listMembers');
  const create = useMutation({
    ...createTenantRoleMutation(),
    onMutate: () => setDone(null),
    onSuccess: async (r) => {
      setDone(`Role ${r.key} created.`);
      await refresh();
    },
  });
  const remove = useMutation({
    ...deleteTenantRoleMutation(),
    onMutate: () => setDone(null),
    onSuccess: async (r) => {
      setDone(`Role ${r.key} deleted.`);
      await refresh();
    },
  });
  const roles = list.data?.roles ?? [];
  return (
    <Page title="Roles">
      <p className="hint">Members hold one role. Platform roles are available in every tenant; this tenant&apos;s own roles are built from the platform&apos;s permissions.</p>
      <SuccessNotice>{done}</SuccessNotice>
      <ErrorNotice error={remove.error} title="The role was not deleted" />
      {list.isPending ? <Loading what="roles" /> : null}
      <ErrorNotice error={list.error} />
      {list.data ? (
        <>
          <h2>Platform roles</h2>
          <RolesTable roles={roles.filter((r) => r.scope === 'platform')} caption="Platform roles" />
          <h2>This tenant&apos;s roles</h2>
          {roles.some((r) => r.scope === 'tenant') ? (
            <RolesTable
              roles={roles.filter((r) => r.scope === 'tenant')}
              caption="This tenant's roles"
              busy={remove.isPending}
              onDelete={(r) => remove.mutate({ headers: s.tenantHeaders, path: { role_key: r.key } })}
            />
          ) : (
            <p>No role of its own yet.</p>
          )}
        </>
      ) : null}
      <CreateRoleForm heading="New role for this tenant" busy={create.isPending} error={create.error} onCreate={(body) => create.mutate({ headers: s.tenantHeaders, body })} />
    </Page>
  );
}
