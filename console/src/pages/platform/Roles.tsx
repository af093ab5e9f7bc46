/**
 * /admin/roles (platform admins): the platform roles, available in every tenant, with what each
 * allows; creating and deleting them (listPlatformRoles, createPlatformRole, deletePlatformRole).
 */
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { createPlatformRoleMutation, deletePlatformRoleMutation, listPlatformRolesOptions } from '@generated/@tanstack/react-query.gen';
import { ErrorNotice, SuccessNotice } from '../../components/ErrorNotice';
import { Loading, Page } from '../../components/Page';
import { CreateRoleForm, RolesTable } from '../../components/roles/RoleViews';
import { invalidateOperations } from '../../components/tenant/queries';

export default function PlatformRoles() {
  const queryClient = useQueryClient();
  const list = useQuery(listPlatformRolesOptions());
  const [done, setDone] = useState<string | null>(null);
  const refresh = () => invalidateOperations(queryClient, 'listPlatformRoles', 'listTenantRoles');
  const create = useMutation({
    ...createPlatformRoleMutation(),
    onMutate: () => setDone(null),
    onSuccess: async (r) => {
      setDone(`Role ${r.key} created.`);
      await refresh();
    },
  });
  const remove = useMutation({
    ...deletePlatformRoleMutation(),
    onMutate: () => setDone(null),
    onSuccess: async (r) => {
      setDone(`Role ${r.key} deleted.`);
      await refresh();
    },
  });
  return (
    <Page title="Platform roles">
      <p className="hint">Available in every tenant. admin and member are built in: they cannot be deleted, and their permissions can be changed.</p>
      <SuccessNotice>{done}</SuccessNotice>
      <ErrorNotice error={remove.error} title="The role was not deleted" />
      {list.isPending ? <Loading what="roles" /> : null}
      <ErrorNotice error={list.error} />
      {list.data ? <RolesTable roles={list.data.roles} caption="Platform roles" busy={remove.isPending} onDelete={(r) => remove.mutate({ path: { role_key: r.key } })} /> : null}
      <CreateRoleForm heading="New platform role" busy={create.isPending} error={create.error} onCreate={(body) => create.mutate({ body })} />
    </Page>
  );
}
