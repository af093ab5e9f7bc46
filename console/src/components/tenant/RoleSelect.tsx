/**
 * The role of a member or invitee: a labelled <select> of every role available in the current
 * tenant (listTenantRoles: the platform roles and the tenant's own), each option saying what it
 * allows, and the chosen role's permissions under it. Falls back to the two built-in roles when
 * the list cannot be read.
 */
import { useQuery } from '@tanstack/react-query';
import { listTenantRolesOptions } from '@generated/@tanstack/react-query.gen';
import type { MemberRole, Role } from '@generated/types.gen';
import { useSession } from '../../session';

/** What a role allows, as a phrase. */
export function allows(permissions: readonly string[]): string {
  return permissions.length ? permissions.join(', ') : 'no product permissions';
}

/** The roles available in the current tenant; asked only of its admins and platform admins (`enabled`). */
export function useTenantRoles(enabled = true): Role[] | undefined {
  const s = useSession();
  return useQuery({ ...listTenantRolesOptions({ headers: s.tenantHeaders }), retry: false, enabled }).data?.roles;
}

export function RoleSelect({ id, value, onChange, label = 'Role' }: { id: string; value: MemberRole; onChange: (role: MemberRole) => void; label?: string }) {
  const roles = useTenantRoles();
  const options = roles ?? [
    { key: 'member', name: 'Member', permissions: [] },
    { key: 'admin', name: 'Admin', permissions: [] },
  ];
  const chosen = options.find((r) => r.key === value);
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      <select id={id} value={value} onChange={(e) => onChange(e.target.value)} aria-describedby={`${id}-allows`}>
        {options.map((r) => (
          <option key={r.key} value={r.key}>
            {r.key} — {allows(r.permissions)}
          </option>
        ))}
      </select>
      <p className="hint" id={`${id}-allows`}>
        {chosen ? `${chosen.name} allows: ${allows(chosen.permissions)}.` : null}
      </p>
    </div>
  );
}
