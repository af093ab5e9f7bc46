/**
 * What the role pages share (docs/roles.md): a table of roles with what each allows, and the
 * form that creates one from catalogue permission keys. The service checks every key and names
 * an unknown one; this form only splits the list.
 */
import { useId, useState, type FormEvent } from 'react';
import type { CreateRoleRequest, Role } from '@generated/types.gen';
import { ErrorNotice } from '../ErrorNotice';
import { allows } from '../tenant/RoleSelect';

const ROLE_KEY = /^[a-z0-9-]{1,64}$/;

/** The roles, each with its scope and permissions; `onDelete` adds a Delete button where it applies. */
export function RolesTable({ roles, caption, onDelete, busy }: { roles: Role[]; caption: string; onDelete?: (r: Role) => void; busy?: boolean }) {
  return (
    <table>
      <caption className="visually-hidden">{caption}</caption>
      <thead>
        <tr>
          <th scope="col">Key</th>
          <th scope="col">Name</th>
          <th scope="col">Scope</th>
          <th scope="col">Allows</th>
          {onDelete ? (
            <th scope="col">
              <span className="visually-hidden">Actions</span>
            </th>
          ) : null}
        </tr>
      </thead>
      <tbody>
        {roles.map((r) => (
          <tr key={`${r.scope}:${r.key}`}>
            <td>
              <code>{r.key}</code>
            </td>
            <td>{r.name}</td>
            <td>{r.built_in ? 'built in' : r.scope === 'platform' ? 'every tenant' : 'this tenant'}</td>
            <td>{allows(r.permissions)}</td>
            {onDelete ? (
              <td className="row-actions">
                {r.built_in ? null : (
                  <button type="button" disabled={busy} aria-label={`Delete role ${r.key}`} onClick={() => onDelete(r)}>
                    Delete
                  </button>
                )}
              </td>
            ) : null}
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** Creating a role: key, name and catalogue permissions (comma- or space-separated). */
export function CreateRoleForm({ onCreate, busy, error, heading }: { onCreate: (body: CreateRoleRequest) => void; busy: boolean; error: unknown; heading: string }) {
  const id = useId();
  const [key, setKey] = useState('');
  const [name, setName] = useState('');
  const [permissions, setPermissions] = useState('');
  const [problem, setProblem] = useState<string | null>(null);
  function submit(e: FormEvent) {
    e.preventDefault();
    if (!ROLE_KEY.test(key.trim())) return setProblem('The key may contain only lowercase letters, digits and hyphens (at most 64).');
    if (!name.trim()) return setProblem('Give the role a name.');
    setProblem(null);
    onCreate({ key: key.trim(), name: name.trim(), permissions: permissions.split(/[\s,]+/).filter(Boolean) });
  }
  return (
    <form onSubmit={submit} aria-labelledby={`${id}-h`}>
      <h2 id={`${id}-h`}>{heading}</h2>
      <div className="field">
        <label htmlFor={`${id}-key`}>Key</label>
        <input id={`${id}-key`} value={key} onChange={(e) => setKey(e.target.value)} autoComplete="off" />
      </div>
      <div className="field">
        <label htmlFor={`${id}-name`}>Name</label>
        <input id={`${id}-name`} value={name} onChange={(e) => setName(e.target.value)} autoComplete="off" />
      </div>
      <div className="field">
        <label htmlFor={`${id}-perms`}>Permissions</label>
        <input id={`${id}-perms`} value={permissions} onChange={(e) => setPermissions(e.target.value)} aria-describedby={`${id}-perms-hint`} autoComplete="off" />
        <p className="hint" id={`${id}-perms-hint`}>
          Catalogue permission keys, separated by commas, e.g. invoices:read, invoices:write.
        </p>
      </div>
      {problem ? (
        <p className="notice notice-error" role="alert">
          {problem}
        </p>
      ) : null}
      <ErrorNotice error={error} title="The role was not created" />
      <button type="submit" disabled={busy}>
        Create role
      </button>
    </form>
  );
}
