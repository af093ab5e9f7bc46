/**
 * A refused membership change. When the service answers 409 (the tenant would be left without
 * an admin), its sentence is followed by the rule and what to do about it.
 */
import { asProblem } from '../../api';
import { ErrorNotice } from '../ErrorNotice';

export function isLastAdminRefusal(error: unknown): boolean {
  return error !== null && error !== undefined && asProblem(error).status === 409;
}

export function MembershipErrorNotice({ error, action, why }: { error: unknown; action: string; why?: string }) {
  if (error === null || error === undefined) return null;
  return (
    <>
      <ErrorNotice error={error} title={`Could not ${action}`} />
      {isLastAdminRefusal(error) ? (
        <div className="notice" role="note">
          <p>
            <strong>Why:</strong> {why ?? 'a tenant must keep at least one admin, and this change would leave it with none.'}
          </p>
          <p>
            What to do: make another member admin first (on the Members page, set their role to admin), then try again.
          </p>
        </div>
      ) : null}
    </>
  );
}
