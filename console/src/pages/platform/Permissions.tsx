/**
 * /admin/permissions (platform admins): the permission catalogue, the product's vocabulary that
 * every role is built from (listPermissions, createPermission, deletePermission). Deleting one
 * takes it out of every role at once.
 */
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useId, useState, type FormEvent } from 'react';
import { createPermissionMutation, deletePermissionMutation, listPermissionsOptions } from '@generated/@tanstack/react-query.gen';
import { ErrorNotice, SuccessNotice } from '../../components/ErrorNotice';
import { Loading, Page } from '../../components/Page';
import { invalidateOperations } from '../../components/tenant/queries';

const KEY = /^[a-z0-9][a-z0-9._-]*(:[a-z0-9][a-z0-9._-]*)*$/;

export default function Permissions() {
  const id = useId();
  const queryClient = useQueryClient();
  const list = useQuery(listPermissionsOptions());
  const [key, setKey] = useState('');
  const [description, setDescription] = useState('');
  const [problem, setProblem] = useState<string | null>(null);
  const [done, setDone] = useState<string | null>(null);
  const refresh = () => invalidateOperations(queryClient, 'listPermissions', 'listPlatformRoles', 'listTenantRoles', 'listMembers');
  const create = useMutation({
    ...createPermissionMutation(),
    onMutate: () => setDone(null),
    onSuccess: async (p) => {
      setDone(`Permission ${p.key} defined.`);
      setKey('');
      setDescription('');
      await refresh();
    },
  });
  const remove = useMutation({
    ...deletePermissionMutation(),
    onMutate: () => setDone(null),
    onSuccess: async (p) => {
      const n = p.removed_from_roles.length;
      setDone(`Permission ${p.key} deleted; ${n === 0 ? 'no role held it' : `taken out of the ${n} role${n === 1 ? '' : 's'} that held it (platform and tenant)`}.`);
      await refresh();
    },
  });
  function submit(e: FormEvent) {
    e.preventDefault();
    const k = key.trim();
    if (k.length > 100 || !KEY.test(k)) return setProblem("A key is segments of a-z 0-9 . _ - joined by ':', e.g. invoices:write.");
    setProblem(null);
    create.mutate({ body: { key: k, ...(description.trim() ? { description: description.trim() } : {}) } });
  }
  const permissions = list.data?.permissions ?? [];
  return (
    <Page title="Permissions">
      <p className="hint">What your product lets people do. Roles, on the platform and in each tenant, are built from these.</p>
      <SuccessNotice>{done}</SuccessNotice>
      <ErrorNotice error={remove.error} title="The permission was not deleted" />
      {list.isPending ? <Loading what="permissions" /> : null}
      <ErrorNotice error={list.error} />
      {list.data && permissions.length === 0 ? <p>No permission yet.</p> : null}
      {permissions.length ? (
        <table>
          <caption className="visually-hidden">Permissions</caption>
          <thead>
            <tr>
              <th scope="col">Key</th>
              <th scope="col">Description</th>
              <th scope="col">
                <span className="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {permissions.map((p) => (
              <tr key={p.key}>
                <td>
                  <code>{p.key}</code>
                </td>
                <td>{p.description || '—'}</td>
                <td className="row-actions">
                  {/* A system permission guards the service's own tenant operations: never deleted. */}
                  {p.system ? (
                    <span>System</span>
                  ) : (
                    <button type="button" disabled={remove.isPending} aria-label={`Delete permission ${p.key}`} onClick={() => remove.mutate({ path: { permission_key: p.key } })}>
                      Delete
                    </button>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
      <form onSubmit={submit} aria-labelledby={`${id}-h`}>
        <h2 id={`${id}-h`}>Define a permission</h2>
        <div className="field">
          <label htmlFor={`${id}-key`}>Key</label>
          <input id={`${id}-key`} value={key} onChange={(e) => setKey(e.target.value)} autoComplete="off" />
        </div>
        <div className="field">
          <label htmlFor={`${id}-desc`}>Description</label>
          <input id={`${id}-desc`} value={description} onChange={(e) => setDescription(e.target.value)} autoComplete="off" />
        </div>
        {problem ? (
          <p className="notice notice-error" role="alert">
            {problem}
          </p>
        ) : null}
        <ErrorNotice error={create.error} title="The permission was not defined" />
        <button type="submit" disabled={create.isPending}>
          Define permission
        </button>
      </form>
    </Page>
  );
}
