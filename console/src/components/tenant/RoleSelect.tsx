import type { MemberRole } from '@generated/types.gen';

/** The role of a new member or invitee: a labelled <select> of the contract's two roles. */
export function RoleSelect({ id, value, onChange }: { id: string; value: MemberRole; onChange: (role: MemberRole) => void }) {
  return (
    <div className="field">
      <label htmlFor={id}>Role</label>
      <select id={id} value={value} onChange={(e) => onChange(e.target.value as MemberRole)}>
        <option value="member">member</option>
        <option value="admin">admin</option>
      </select>
    </div>
  );
}
