/**
 * A refused registration (docs/tenants.md#self-service-registration): the service's sentence with
 * its request ID, and what the person can do about each refusal.
 */
import type { RegistrationStatus } from '@generated/types.gen';
import { asProblem } from '../../api';
import { ErrorNotice } from '../ErrorNotice';

function advice(error: string, status: number, rules: RegistrationStatus | undefined): string | null {
  switch (error) {
    case 'Conflict':
      return 'Choose another slug, or leave the slug empty and one is made from the organization name.';
    case 'Domain not allowed':
      return rules?.allowed_domains?.length
        ? `Both the admin email and the verified email of your sign-in must be at one of: ${rules.allowed_domains.join(', ')}.`
        : 'Both the admin email and the verified email of your sign-in must be at an allowed domain.';
    case 'Tenant limit reached':
      return rules?.max_tenants_per_user
        ? `Each person may register at most ${rules.max_tenants_per_user} tenant${rules.max_tenants_per_user === 1 ? '' : 's'} here. Ask a platform admin to create another one for you.`
        : 'Ask a platform admin to create another tenant for you.';
    case 'Registration disabled':
      return 'This service runs a single tenant; its operator creates tenants, not the people who use it.';
    default:
      return status === 400 ? 'Correct the field the sentence names and register again.' : null;
  }
}

export function RegistrationErrorNotice({ error, rules }: { error: unknown; rules: RegistrationStatus | undefined }) {
  if (error === null || error === undefined) return null;
  const p = asProblem(error);
  const more = advice(p.error, p.status, rules);
  return (
    <>
      <ErrorNotice error={error} title="Registration refused" />
      {more ? <p className="hint">{more}</p> : null}
    </>
  );
}
